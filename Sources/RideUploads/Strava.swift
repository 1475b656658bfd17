import Foundation

/// Strava's API v3 as documented: OAuth 2 (authorization code, then a refresh token that may change at each
/// refresh), uploads that Strava reads asynchronously (`POST /api/v3/uploads`, then its status until it is an
/// activity or an error such as "duplicate of activity N"), activities listed by time, an activity's name and
/// description updated. Strava's API cannot replace an activity's file nor delete an activity.
struct Strava: Sendable {
    let client: ServiceClient

    /// What reading an upload came to.
    enum UploadStatus: Equatable {
        case processing
        /// Strava no longer knows the upload (404): where it went is found by the ride's external id.
        case unknown
        case ready(activityId: String)
        case duplicate(activityId: String)
        case failed(String)
    }

    /// Strava's upload object (`Upload`): its activity when read, its error, else still being read.
    static func status(of upload: [String: Any]) -> UploadStatus {
        if let error = upload["error"] as? String, !error.isEmpty {
            if let activity = duplicateActivity(error) { return .duplicate(activityId: activity) }
            return .failed(error)
        }
        if let activity = identifier(upload["activity_id"]) { return .ready(activityId: activity) }
        return .processing
    }

    /// The activity named by Strava's "… duplicate of activity 123" (some versions put it in a link).
    static func duplicateActivity(_ error: String) -> String? {
        guard let range = error.range(of: "duplicate of") else { return nil }
        let digits = error[range.upperBound...].drop { !$0.isNumber }.prefix { $0.isNumber }
        return digits.isEmpty ? nil : String(digits)
    }

    func upload(_ ride: RideFile) async throws -> UploadAnswer {
        var form = MultipartForm()
        form.add(file: "file", fileName: ride.fileName, contentType: "application/octet-stream", ride.bytes)
        form.add(field: "data_type", "fit")
        form.add(field: "external_id", ride.externalId)
        if let name = ride.name { form.add(field: "name", name) }
        form.add(field: "description", ride.description)
        let request = ServiceRequest(
            .POST, "/api/v3/uploads", headers: [("Content-Type", form.contentType), ("Accept", "application/json")],
            body: form.finished)
        switch try await client.send(request) {
        case .lost(let reason, let wait): return .lost(reason: reason, waitSeconds: wait)
        case .answer(let response):
            switch RetryPolicy.verdict(response) {
            case .success:
                guard let upload = jsonObject(response) else {
                    return .lost(reason: "Strava answered the upload with something unreadable", waitSeconds: nil)
                }
                switch Self.status(of: upload) {
                case .ready(let activity): return .created(remoteId: activity)
                case .duplicate(let activity): return .duplicate(remoteId: activity)
                case .failed(let message): return .refused(client.redaction().apply(message))
                case .processing, .unknown:
                    guard let id = identifier(upload["id_str"]) ?? identifier(upload["id"]) else {
                        return .lost(reason: "Strava answered the upload without its id", waitSeconds: nil)
                    }
                    return .processing(uploadId: id)
                }
            case .unauthorized: throw client.refusedCredentials()
            default: return .refused(client.redaction().apply(RetryPolicy.message(response)))
            }
        }
    }

    func status(_ uploadId: String) async throws -> UploadStatus {
        let request = ServiceRequest(
            .GET, "/api/v3/uploads/\(FormEncoding.escape(uploadId))", headers: [("Accept", "application/json")])
        guard let response = try await client.fetch(request, doing: "tell how upload \(uploadId) went") else {
            return .unknown
        }
        guard let upload = jsonObject(response) else {
            throw UploadError("Strava answered upload \(uploadId)'s status with something unreadable")
        }
        let status = Self.status(of: upload)
        if case .failed(let message) = status { return .failed(client.redaction().apply(message)) }
        return status
    }

    /// The activity uploaded with `externalId`, among the athlete's activities of two days around the ride.
    func find(_ externalId: String, startMicroseconds: Int64) async throws -> String? {
        let start = startMicroseconds / 1_000_000
        let query = FormEncoding.encode([
            ("after", String(start - 2 * 86_400)), ("before", String(start + 2 * 86_400)), ("per_page", "200"),
        ])
        let response = try await client.expect(
            ServiceRequest(.GET, "/api/v3/athlete/activities?" + query, headers: [("Accept", "application/json")]),
            doing: "list the activities")
        guard let activities = jsonArray(response) else {
            throw UploadError("Strava answered the list of activities with something that is not one")
        }
        return activities.first { $0["external_id"] as? String == externalId }.flatMap { identifier($0["id"]) }
    }

    /// Sets the activity's name (when the ride has one) and description.
    func updateDetails(_ remoteId: String, name: String?, description: String) async throws {
        var fields: [String: String] = ["description": description]
        if let name { fields["name"] = name }
        let body = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        _ = try await client.expect(
            ServiceRequest(
                .PUT, "/api/v3/activities/\(FormEncoding.escape(remoteId))",
                headers: [("Content-Type", "application/json"), ("Accept", "application/json")], body: [UInt8](body)),
            doing: "update activity \(remoteId)")
    }
}

/// Strava's OAuth 2: the authorization page's address, the code exchanged for tokens, the tokens refreshed. The
/// token endpoint takes the client's id and secret in the form (as Strava documents), over TLS.
public enum StravaAuthorization {
    /// The scopes an upload needs: write activities, and read them (the look-up by external id sees private ones).
    public static let scope = "activity:write,activity:read_all"

    public static func authorizeURL(address: ServiceAddress, clientId: String, redirect: String, state: String)
        -> String
    {
        "\(address)/oauth/authorize?"
            + FormEncoding.encode([
                ("client_id", clientId), ("redirect_uri", redirect), ("response_type", "code"),
                ("approval_prompt", "auto"), ("scope", scope), ("state", state),
            ])
    }

    public struct Tokens: Equatable, Sendable {
        public var accessToken: String
        public var refreshToken: String
        public var expiresAt: Int64
        public var athlete: String?
        public var scope: String?
    }

    /// `grant`: `authorization_code` with the code, or `refresh_token` with the refresh token.
    public static func tokens(
        address: ServiceAddress, clientId: String, clientSecret: String, grant: (type: String, value: String),
        reach: ServiceReach = ServiceReach()
    ) async throws -> Tokens {
        let redaction = Redaction([clientSecret, grant.value])
        let client = ServiceClient(
            service: .strava, address: address, reach: reach,
            authorization: { nil }, reauthorize: { false }, redaction: { redaction })
        let field = grant.type == "authorization_code" ? "code" : "refresh_token"
        let body = FormEncoding.encode([
            ("client_id", clientId), ("client_secret", clientSecret), ("grant_type", grant.type), (field, grant.value),
        ])
        // Sending the same code or refresh token twice is harmless: the token endpoint creates no activity.
        let request = ServiceRequest(
            .POST, "/oauth/token",
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Array(body.utf8))
        var failures = 0
        while true {
            switch try await client.send(request) {
            case .lost(let reason, let wait):
                failures += 1
                guard failures < reach.policy.attempts else { throw client.tryLater(reason) }
                try await client.wait(for: wait, failures: failures, reason: reason)
            case .answer(let response):
                switch RetryPolicy.verdict(response) {
                case .success:
                    guard let object = jsonObject(response), let access = object["access_token"] as? String,
                        let refresh = object["refresh_token"] as? String,
                        let expires = (object["expires_at"] as? NSNumber)?.int64Value
                    else { throw UploadError("Strava's token answer lacks the tokens") }
                    let athlete = (object["athlete"] as? [String: Any]).flatMap { identifier($0["id"]) }
                    return Tokens(
                        accessToken: access, refreshToken: refresh, expiresAt: expires, athlete: athlete,
                        scope: object["scope"] as? String)
                case .unauthorized, .refused, .notFound:
                    if grant.type == "refresh_token" { throw client.refusedCredentials() }
                    throw UploadError(
                        "Strava refused the authorization code (\(redaction.apply(RetryPolicy.message(response)))); "
                            + "`cyclelog-sync account add strava` again and approve it within a few minutes")
                case .transient, .redirected: throw UploadError("Strava's token endpoint failed", .tryLater)
                }
            }
        }
    }
}
