import Foundation

/// One service's requests: its address, its credentials in each request, the retry policy. A request that may be
/// sent twice (GET, PUT, DELETE) is retried here; a POST whose answer was lost is handed back as `.lost`, for its
/// caller to look up what it created before it sends it again.
struct ServiceClient: Sendable {
    let service: Service
    let address: ServiceAddress
    let reach: ServiceReach
    /// The `Authorization` header of the next request (Strava's refreshes its token when it is about to expire).
    let authorization: @Sendable () async throws -> String?
    /// Called once after a 401; true when new credentials are worth a second try (Strava's refreshed token).
    let reauthorize: @Sendable () async throws -> Bool
    let redaction: @Sendable () -> Redaction

    enum Exchange {
        case answer(ServiceResponse)
        /// A POST that may have reached the service, whose answer is unknown or a failure (5xx, 429, cut).
        case lost(reason: String, waitSeconds: Double?)
    }

    /// Sends `request`; retries transient failures of requests that may be sent twice, up to the policy's tries.
    func send(_ request: ServiceRequest) async throws -> Exchange {
        var failures = 0
        var reauthorized = false
        while true {
            var request = request
            if let header = try await authorization() { request.headers.append(("Authorization", header)) }
            let reason: String
            var retryAfter: Double?
            do {
                let response = try await reach.transport.send(
                    request, to: address, deadlineSeconds: reach.policy.replySeconds)
                switch RetryPolicy.verdict(response) {
                case .unauthorized:
                    if !reauthorized, try await reauthorize() {
                        reauthorized = true
                        continue
                    }
                    return .answer(response)
                case .transient(let waitSeconds, let words):
                    reason = "\(service.title) \(words)"
                    retryAfter = waitSeconds
                    if !request.isIdempotent { return .lost(reason: reason, waitSeconds: retryAfter) }
                case .redirected(let location):
                    // Not followed (what answers may not be the service at all), nor tried again in this run: the
                    // ride waits, its upload row saying `sending`, which the next run looks up before a resend.
                    throw tryLater("\(service.title) \(RetryPolicy.redirection(response.status, location: location))")
                default:
                    return .answer(response)
                }
            } catch let failure as TransportFailure {
                reason = failure.description
                if !request.isIdempotent && failure.mayHaveArrived {
                    return .lost(reason: reason, waitSeconds: nil)
                }
            }
            failures += 1
            guard failures < reach.policy.attempts else { throw tryLater(reason) }
            // A request that failed may still have been carried out, and changed the credentials' standing (a token
            // that expired meanwhile): a 401 after it earns one more try with new ones, within the same attempts.
            reauthorized = false
            try await wait(for: retryAfter, failures: failures, reason: reason)
        }
    }

    /// Sends a request and takes a 2xx answer only; anything else ends in words.
    func expect(_ request: ServiceRequest, doing what: String) async throws -> ServiceResponse {
        guard let response = try await fetch(request, doing: what) else {
            throw UploadError("\(service.title) refused to \(what): it has no such thing (404)")
        }
        return response
    }

    /// The same, with nil for a 404: what was asked for is not there.
    func fetch(_ request: ServiceRequest, doing what: String) async throws -> ServiceResponse? {
        switch try await send(request) {
        case .lost(let reason, _): throw tryLater(reason)
        case .answer(let response):
            switch RetryPolicy.verdict(response) {
            case .success: return response
            case .notFound: return nil
            case .unauthorized: throw refusedCredentials()
            default:
                throw UploadError(
                    "\(service.title) refused to \(what): \(redaction().apply(RetryPolicy.message(response)))")
            }
        }
    }

    /// Waits as the service asked (`Retry-After`), else the back-off; a wait longer than the policy allows ends
    /// the run for the timer to try later.
    func wait(for retryAfter: Double?, failures: Int, reason: String) async throws {
        let seconds = retryAfter ?? reach.policy.backoffSeconds(afterFailures: failures)
        if seconds > reach.policy.longestRetryAfterSeconds {
            throw tryLater("\(reason); it asked to wait \(Int(seconds)) s")
        }
        try await reach.pause(seconds)
    }

    func tryLater(_ reason: String) -> UploadError {
        UploadError("\(redaction().apply(reason)); cyclelog-sync tries again later", .tryLater)
    }

    func refusedCredentials() -> UploadError {
        switch service {
        case .intervals:
            UploadError(
                "intervals.icu refused the API key (revoked or mistyped): make a new one in intervals.icu's Settings, "
                    + "then `cyclelog-sync account add intervals --athlete ID --api-key-file FILE` again")
        case .strava:
            UploadError(
                "Strava refused cyclelog's authorization (revoked, or expired and not renewed): "
                    + "`cyclelog-sync account add strava` again")
        }
    }
}

/// How the services are reached: the transport, the retry policy and the waits between tries. The uploads, the
/// coach's plan and Strava's tokens share one; a test puts a scripted transport and waits that do not sleep in it.
public struct ServiceReach: Sendable {
    public var transport: any HTTPTransport = NetworkTransport()
    public var policy = RetryPolicy()
    public var pause: @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }

    public init() {}

    /// An account's address, refused in words (plain http to another machine, not an address).
    func address(_ text: String) throws -> ServiceAddress {
        do { return try ServiceAddress(text) } catch { throw UploadError(error.description, .cannotUse) }
    }

    /// intervals.icu's client with the account's key.
    func intervals(_ account: IntervalsAccount) throws -> IntervalsICU {
        let redaction = Redaction([account.apiKey, IntervalsICU.authorization(account)])
        let client = ServiceClient(
            service: .intervals, address: try address(account.address), reach: self,
            authorization: { IntervalsICU.authorization(account) }, reauthorize: { false },
            redaction: { redaction })
        return IntervalsICU(account: account, client: client)
    }

    /// Strava's client with the account's tokens, refreshed and written back to `folder` as they change.
    func strava(_ account: StravaAccount, folder: AccountFolder) throws -> Strava {
        let address = try address(account.address)
        let tokens = StravaTokens(account: account, folder: folder, address: address, reach: self)
        let client = ServiceClient(
            service: .strava, address: address, reach: self, authorization: { try await tokens.header() },
            reauthorize: { try await tokens.refresh() }, redaction: { tokens.secrets.redaction })
        return Strava(client: client)
    }
}

/// Reads a JSON answer.
func jsonObject(_ response: ServiceResponse) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
}

func jsonArray(_ response: ServiceResponse) -> [[String: Any]]? {
    (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [[String: Any]]
}

/// An id that a service writes as a number or a string.
func identifier(_ value: Any?) -> String? {
    switch value {
    case let text as String: text.isEmpty ? nil : text
    case let number as NSNumber: number.stringValue
    default: nil
    }
}
