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
    /// The paired device that sent it (set by `DeviceAuthentication`), and whether its token came as the cookie
    /// (a browser) rather than a bearer header.
    var device: DeviceRegistry.Device?
    var deviceByCookie = false

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

/// The mirror's HTTP side (Docs/guide/second-screen.md, "The mirrored ride"; Docs/reference/http-api.md): a
/// Hummingbird router with a route collection per API (pairing, the live ride, the history). Every request passes
/// the Host and Origin checks first (`SiteGuard`); everything under `/api/v1` but `pair` needs a paired device
/// (`DeviceAuthentication`: cookie `cyclelog`, or `Authorization: Bearer`); a control also its scope, a browser's
/// request marker and the attempt limit.
public struct MirrorResponder: HTTPResponder {
    public typealias Context = MirrorContext

    public static let bodyLimitBytes = 4096
    public static let cookieName = "cyclelog"
    static let apiPrefix = "/api/v1/"

    private let router: RouterResponder<MirrorContext>

    /// `history`: the ride history from the database, whether or not a recorder runs. `secure`: the page is served
    /// over TLS (the cookie is then `Secure`).
    public init(
        hub: MirrorHub, devices: DeviceRegistry, recorder: RecorderLink, requestGuard: RequestGuard,
        history: HistoryAPI? = nil, secure: Bool = false
    ) {
        let router = Router(context: MirrorContext.self)
        router.add(middleware: SiteGuard(requestGuard: requestGuard))
        router.add(middleware: NoSuchRoute(devices: devices))
        router.get("/") { _, _ in Self.page(MirrorPage.html, images: "data:") }
        // The history's charts are SVG from its own API.
        router.get("/history") { _, _ in Self.page(HistoryPage.html, images: "'self' data:") }
        router.addRoutes(PairingRoutes(devices: devices, secure: secure).routes)
        let api = router.group("api/v1").add(middleware: DeviceAuthentication(devices: devices))
        api.addRoutes(LiveRoutes(hub: hub, recorder: recorder).routes)
        // Reading the history needs no more than the read scope every paired device has.
        if let history { api.addRoutes(history.routes) }
        self.router = router.buildResponder()
    }

    public func respond(to request: Request, context: MirrorContext) async throws -> Response {
        try await router.respond(to: request, context: context)
    }

    // MARK: Bodies and answers

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
}
