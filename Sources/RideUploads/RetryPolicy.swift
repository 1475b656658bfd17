import Formats
import Foundation

/// How long to wait and how often to try again when a service does not answer, fails (5xx) or asks to slow down
/// (429 with `Retry-After`); pure.
public struct RetryPolicy: Sendable {
    /// Tries of one request in one run, the first included; then the run ends with "try again later" (exit 75).
    public var attempts = 5
    /// The first wait; doubled after each failure up to `longestBackoffSeconds`.
    public var firstBackoffSeconds = 1.0
    public var longestBackoffSeconds = 60.0
    /// A `Retry-After` longer than this ends the run instead (the timer tries again later).
    public var longestRetryAfterSeconds = 900.0
    /// How long one request and its answer may take.
    public var replySeconds = 60.0
    /// Strava reads an upload for a few seconds: how many times its status is asked before the run leaves it
    /// for the next (the waits are the back-off's).
    public var statusPolls = 8

    public init() {}

    /// The wait after `failures` failures in a row (1, 2, 4 … with the defaults).
    public func backoffSeconds(afterFailures failures: Int) -> Double {
        min(firstBackoffSeconds * Double(1 << min(max(failures - 1, 0), 20)), longestBackoffSeconds)
    }

    /// What a response means for the request that got it.
    public enum Verdict: Equatable, Sendable {
        case success
        /// Try again after this wait (seconds): 5xx, 429, 408.
        case transient(waitSeconds: Double?, reason: String)
        /// The credentials were refused (401).
        case unauthorized
        /// 404: what was asked for is not there.
        case notFound
        /// 3xx: pointed elsewhere (a captive portal, a proxy, a moved address), with the `Location` it gave. Never
        /// followed, so that no credentials reach another host; not a refusal either: tried again later.
        case redirected(location: String?)
        /// Any other refusal, with the service's message.
        case refused(String)
    }

    public static func verdict(_ response: ServiceResponse, now: Date = Date()) -> Verdict {
        switch response.status {
        case 200..<300: return .success
        case 401: return .unauthorized
        case 404: return .notFound
        case 300..<400: return .redirected(location: response.header("Location"))
        case 408, 429, 500..<600:
            let words =
                response.status == 429
                ? "asked to slow down (429)" : "failed (\(response.status))"
            return .transient(waitSeconds: retryAfterSeconds(response.header("Retry-After"), now: now), reason: words)
        default:
            return .refused(message(response))
        }
    }

    /// A redirect in words: where it pointed (its first 120 characters, shown safely), and why it is not followed.
    public static func redirection(_ status: Int, location: String?) -> String {
        let target = location.map { " to \(ShownText.cut(ShownText.visible($0), to: 120))" } ?? ""
        return "answered with a redirect (HTTP \(status))\(target), which cyclelog-sync does not follow (a captive "
            + "portal, a proxy or a moved address; nothing was sent there)"
    }

    /// `Retry-After`: a number of seconds, or an HTTP date (RFC 9110 §10.2.3).
    public static func retryAfterSeconds(_ value: String?, now: Date) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value), seconds >= 0 { return Double(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// A service's refusal in its own words when it gave some (`message`, `error`, `errors`), else the status; at
    /// most 300 characters of it (a server that lies may send a book).
    public static func message(_ response: ServiceResponse) -> String {
        let words = fullMessage(response)
        return words.count > 300 ? String(words.prefix(300)) + "…" : words
    }

    private static func fullMessage(_ response: ServiceResponse) -> String {
        if let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] {
            for key in ["message", "error", "status"] {
                if let text = object[key] as? String, !text.isEmpty {
                    if let errors = object["errors"] as? [[String: Any]], let first = errors.first {
                        let detail = [first["resource"], first["field"], first["code"]].compactMap { $0 as? String }
                        if !detail.isEmpty { return "\(text) (\(detail.joined(separator: " ")))" }
                    }
                    return text
                }
            }
        }
        let text = response.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty || text.count > 200 || text.hasPrefix("<") ? "HTTP \(response.status)" : text
    }
}
