import DBus
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RecorderInterface
import ServiceLifecycle
import Workouts

/// A request's context: what Hummingbird needs, and the address the request came from (for the attempt limit).
public struct MirrorContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: String
    /// The request's connection: a history request's work stops when it closes (its client went away).
    let channel: any NIOCore.Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress ?? ""
        channel = source.channel
    }

    /// Whether the client of this request has gone (its connection closed): checked, never waited for.
    var clientGone: @Sendable () -> Bool {
        let channel = self.channel
        return { !channel.isActive }
    }
}

/// The mirror's HTTP side (Docs/guide/second-screen.md, "The mirrored ride"): the page, pairing, the snapshot, the live stream and
/// controls, under `/api/v1`. Every request passes the Host and Origin checks first; everything under
/// `/api/v1` but `pair` needs a device token (cookie `cyclelog`, or `Authorization: Bearer`).
public struct MirrorResponder: HTTPResponder {
    public typealias Context = MirrorContext

    public let hub: MirrorHub
    public let devices: DeviceRegistry
    public let recorder: RecorderLink
    public let requestGuard: RequestGuard
    /// The ride history from the database, whether or not a recorder runs.
    public let history: HistoryAPI?
    /// Whether the page is served over TLS (the cookie is then `Secure`).
    public let secure: Bool
    let pairingAttempts = AttemptLimiter(limit: 10)
    let controlAttempts = AttemptLimiter(limit: 120)

    public static let bodyLimitBytes = 4096
    public static let cookieName = "cyclelog"
    static let requestHeader = HTTPField.Name("X-Cyclelog-Request")!
    static let lastEventIDHeader = HTTPField.Name("Last-Event-ID")!

    public init(
        hub: MirrorHub, devices: DeviceRegistry, recorder: RecorderLink, requestGuard: RequestGuard,
        history: HistoryAPI? = nil, secure: Bool = false
    ) {
        self.hub = hub
        self.devices = devices
        self.recorder = recorder
        self.requestGuard = requestGuard
        self.history = history
        self.secure = secure
    }

    public func respond(to request: Request, context: MirrorContext) async throws -> Response {
        let host = request.head.authority
        guard requestGuard.allows(host: host) else {
            return Self.error(.misdirectedRequest, "this mirror does not answer to the name '\(host ?? "")'")
        }
        guard requestGuard.allows(origin: request.headers[.origin], host: host) else {
            return Self.error(.forbidden, "requests from other sites are refused")
        }
        var request = request
        switch (request.method, request.uri.path) {
        case (.get, "/"):
            return Self.page(MirrorPage.html, images: "data:")
        case (.get, "/history"):
            // The history's charts are SVG from its own API.
            return Self.page(HistoryPage.html, images: "'self' data:")
        case (.get, "/pair"):
            return await pairWithLink(request, context)
        case (.post, "/api/v1/pair"):
            return await pairWithCode(&request, context)
        case (_, let path) where path.hasPrefix("/api/v1/"):
            guard let (device, byCookie) = await authenticate(request) else {
                return Self.error(.unauthorized, "pair this device first (`cyclelog-mirror pair` on the recorder)")
            }
            switch (request.method, path) {
            case (.get, "/api/v1/status"):
                guard let status = await hub.status() else { return await noRecorder() }
                return Self.json(.ok, status)
            case (.get, "/api/v1/stream"):
                return await stream(request, device: device)
            case (.post, "/api/v1/control"):
                guard device.scope == .control else {
                    return Self.error(.forbidden, "\(device.name) is paired to read only")
                }
                if byCookie, let refusal = Self.checkBrowserPost(request) { return refusal }
                guard await controlAttempts.allow(device.tokenSHA256) else {
                    return Self.error(.tooManyRequests, "too many controls: wait a minute")
                }
                return await control(&request)
            case (.get, _):
                // Reading the history needs no more than the read scope every paired device has.
                if let history,
                    let answer = await history.respond(to: request, path: path, clientGone: context.clientGone)
                {
                    return answer
                }
                return Self.error(.notFound, "no \(request.method) \(path) here")
            default:
                return Self.error(.notFound, "no \(request.method) \(path) here")
            }
        default:
            return Self.error(.notFound, "no \(request.method) \(request.uri.path) here")
        }
    }

    // MARK: Pairing

    private func pairWithLink(_ request: Request, _ context: MirrorContext) async -> Response {
        guard await pairingAttempts.allow(context.remoteAddress) else {
            return Self.error(.tooManyRequests, "too many pairing attempts: wait a minute")
        }
        let token = request.uri.queryParameters.get("t") ?? ""
        do {
            let (deviceToken, _) = try await devices.pair(oneTimeToken: token)
            var response = Response(status: .seeOther, headers: [.location: "/", .cacheControl: "no-store"])
            response.headers[.setCookie] = cookie(deviceToken)
            return response
        } catch {
            return Self.error(
                .unauthorized, "this pairing link has expired or was used: run `cyclelog-mirror pair` again")
        }
    }

    private func pairWithCode(_ request: inout Request, _ context: MirrorContext) async -> Response {
        guard await pairingAttempts.allow(context.remoteAddress) else {
            return Self.error(.tooManyRequests, "too many pairing attempts: wait a minute")
        }
        if let refusal = Self.checkBrowserPost(request, needsMarker: false) { return refusal }
        let body: PairBody
        do {
            body = try await Self.body(&request, usage: "send {\"code\": \"123456\", \"name\": \"my phone\"}")
        } catch { return error.response }
        do {
            let (token, device) = try await devices.pair(code: body.code, name: body.name.map { String($0.prefix(60)) })
            var response = Self.json(
                .ok,
                .object([
                    ("token", .string(token)), ("name", .string(device.name)),
                    ("scope", .string(device.scope.rawValue)),
                ]))
            response.headers[.setCookie] = cookie(token)
            return response
        } catch DeviceRegistry.PairingFailure.exhausted {
            return Self.error(.unauthorized, "five wrong codes: this code is gone; run `cyclelog-mirror pair` again")
        } catch {
            return Self.error(.unauthorized, "wrong or expired code")
        }
    }

    private func cookie(_ token: String) -> String {
        "\(Self.cookieName)=\(token); Path=/; Max-Age=31536000; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// The device of the request's token, and whether it came as the cookie (a browser) or a bearer header.
    private func authenticate(_ request: Request) async -> (DeviceRegistry.Device, Bool)? {
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            return await devices.device(token: String(header.dropFirst(7))).map { ($0, false) }
        }
        for field in request.headers[values: .cookie] {
            for pair in field.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == Self.cookieName {
                    return await devices.device(token: String(parts[1])).map { ($0, true) }
                }
            }
        }
        return nil
    }

    /// A browser's POST must be JSON and carry `X-Cyclelog-Request: 1`: a form on another site can send neither
    /// without the browser asking first (CORS), and this mirror never says yes.
    static func checkBrowserPost(_ request: Request, needsMarker: Bool = true) -> Response? {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/json") else {
            return error(.forbidden, "send JSON (Content-Type: application/json)")
        }
        guard !needsMarker || request.headers[requestHeader] == "1" else {
            return error(.forbidden, "a control needs the header X-Cyclelog-Request: 1")
        }
        return nil
    }

    // MARK: The stream

    private func stream(_ request: Request, device: DeviceRegistry.Device) async -> Response {
        // The browser sends the header when its `EventSource` reconnects by itself; the page, when it opens a new
        // one over a connection that went silent, passes the same id in the query.
        let lastEventID =
            request.headers[Self.lastEventIDHeader] ?? request.uri.queryParameters.get("lastEventId").map { String($0) }
        var subscribed = await hub.subscribe(device: device.tokenSHA256, lastEventID: lastEventID)
        if subscribed == nil {
            // A screen that went away is noticed only when something is written to it, and with no ride running
            // that is the keep-alive every 15 s: write to every stream now, twice (the first write to a closed
            // socket still succeeds and only draws the peer's reset; the second fails), give the dead ones a
            // moment to let go of their places, and ask again.
            for _ in 0..<2 {
                await hub.keepAlive()
                try? await Task.sleep(for: .milliseconds(150))
            }
            subscribed = await hub.subscribe(device: device.tokenSHA256, lastEventID: lastEventID)
        }
        guard let client = subscribed else {
            return Self.error(.serviceUnavailable, "too many screens are open (at most \(hub.maximumClients))")
        }
        let hub = self.hub
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                // Each message is written (and flushed) on its own: a screen sees a value the moment it is here.
                // The mirror stopping ends the stream, else the server would wait for it forever.
                await withGracefulShutdownHandler {
                    do {
                        while let message = await client.next() { try await writer.write(ByteBuffer(string: message)) }
                    } catch {
                        // The screen went away; it reconnects on its own.
                    }
                } onGracefulShutdown: {
                    client.close()
                }
                await hub.unsubscribe(client)
                try? await writer.finish(nil)
            })
    }

    // MARK: Controls

    /// `POST /api/v1/control`: `{"requestId", "command", "expect", "workoutId", "args"}` to the recorder's
    /// `Control`.
    private func control(_ request: inout Request) async -> Response {
        let body: ControlBody
        do {
            body = try await Self.body(
                &request,
                usage: "send {\"requestId\", \"command\", \"expect\", \"workoutId\", \"args\"}; args' values are "
                    + "strings, numbers or true/false")
        } catch { return error.response }
        guard await hub.recorderPresent else { return await noRecorder() }
        if let workoutId = body.workoutId, body.command != "start", workoutId != (await hub.current).workoutId {
            return await stale("the ride changed: workout \(workoutId) is over")
        }
        do {
            let answer = try await recorder.control(
                requestId: body.requestId, command: body.command, expect: body.expect ?? 0,
                arguments: (body.args ?? [:]).mapValues(\.dbusValue))
            return Self.json(
                .ok,
                .object([
                    ("applied", .bool(!answer.duplicate)), ("duplicate", .bool(answer.duplicate)),
                    ("state", .string(answer.state)),
                    ("controlSequence", .integer(Int64(clamping: answer.controlSequence))),
                ]))
        } catch {
            switch error.name {
            case RecorderControl.staleError: return await stale(error.message)
            case RecorderControl.refusedError, RecorderControl.noSensorsError:
                return Self.error(.conflict, error.message)
            case DBusError.invalidArgumentsName: return Self.error(.badRequest, error.message)
            case DBusError.noReplyName, DBusError.timeoutName:
                return Self.error(.gatewayTimeout, "the recorder did not answer within 2 s")
            case let name where RecorderControl.isMissing(DBusError(name: name, message: "")):
                return await noRecorder()
            default: return Self.error(.badGateway, "the recorder said: \(error.description)")
            }
        }
    }

    /// 412 with the current status, so that the screen shows what is true before it asks again.
    private func stale(_ message: String) async -> Response {
        Self.json(
            .preconditionFailed, .object([("error", .string(message)), ("status", await hub.status() ?? .null)]))
    }

    // MARK: Bodies and answers

    struct PairBody: Decodable {
        var code: String
        var name: String?
    }

    struct ControlBody: Decodable {
        var requestId: String
        var command: String
        var expect: UInt64?
        var workoutId: Int64?
        var args: [String: Argument]?
    }

    /// One of a control's `args`: a style's text or flag, an intake's amount.
    enum Argument: Decodable {
        case text(String)
        case flag(Bool)
        case number(Double)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        var dbusValue: DBusValue {
            switch self {
            case .text(let text): .string(text)
            case .flag(let flag): .boolean(flag)
            case .number(let number): .double(number)
            }
        }
    }

    /// A request answered before it reached its handler's work.
    struct Refusal: Error {
        var response: Response
    }

    /// The request's JSON body decoded: 413 beyond the limit, 400 with `usage` when it is not what is expected.
    static func body<Body: Decodable>(_ request: inout Request, usage: String) async throws(Refusal) -> Body {
        let buffer: ByteBuffer
        do {
            buffer = try await collect(request)
        } catch is BodyTimeout {
            throw Refusal(
                response: Self.error(.requestTimeout, "the request body took longer than \(bodySeconds) s"))
        } catch {
            throw Refusal(
                response: Self.error(.contentTooLarge, "a request body takes at most \(bodyLimitBytes) bytes"))
        }
        do { return try JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView)) } catch {
            throw Refusal(response: Self.error(.badRequest, usage + " (JSON)"))
        }
    }

    /// How long a request's body may take to arrive: the server's idle timeout counts from the last piece, so a
    /// body sent a byte at a time would otherwise hold its connection for hours.
    static let bodySeconds = 10

    struct BodyTimeout: Error {}

    /// The body, up to `bodyLimitBytes`, within `bodySeconds`.
    static func collect(_ request: Request) async throws -> ByteBuffer {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask {
                var request = request
                return try await request.collectBody(upTo: bodyLimitBytes)
            }
            group.addTask {
                try await Task.sleep(for: .seconds(bodySeconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let buffer = first else { throw BodyTimeout() }
            return buffer
        }
    }

    /// A page: its own inline style and script, requests to this site only, images from `images`.
    static func page(_ html: String, images: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy:
                    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; "
                    + "img-src \(images)",
            ], body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func json(_ status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: value.rendered() + "\n")))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        json(status, .object([("error", .string(message))]))
    }

    /// 503 with what to do: start a recorder, or (while the mirror cannot reach its bus) why and what to run.
    func noRecorder() async -> Response {
        if let reason = await recorder.unreachable { return Self.error(.serviceUnavailable, reason) }
        return Self.error(
            .serviceUnavailable,
            "no recorder is running on \(recorder.bus): start one with `cyclelog record --wait` "
                + "(or `systemctl start cyclelog`)")
    }
}
