import Foundation
import HTTPTypes
import Hummingbird

/// The checks a request passes before its route's work, as Hummingbird middleware on the router and its groups
/// (Docs/reference/http-api.md, "Who gets in"). Each answers in the mirror's JSON error form.

/// Every request: the Host must be one of this machine's names (DNS rebinding) and an Origin, when sent, this
/// site (cross-site requests). Also wraps the answer for a path no route takes.
struct SiteGuard: RouterMiddleware {
    typealias Context = MirrorContext
    let requestGuard: RequestGuard

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let host = request.head.authority
        guard requestGuard.allows(host: host) else {
            return MirrorResponder.error(.misdirectedRequest, "this mirror does not answer to the name '\(host ?? "")'")
        }
        guard requestGuard.allows(origin: request.headers[.origin], host: host) else {
            return MirrorResponder.error(.forbidden, "requests from other sites are refused")
        }
        return try await next(request, context)
    }
}

/// A path no route takes: 404 in words; under `/api/v1/` a request from a device not paired hears 401 first, as
/// on every route there, so a stranger learns nothing of which paths exist.
struct NoSuchRoute: RouterMiddleware {
    typealias Context = MirrorContext
    let devices: DeviceRegistry

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let path = request.uri.path
        do {
            // The router takes "/api/v1/workouts/" and "//api/v1/workouts" for "/api/v1/workouts"; no path of this
            // server but "/" ends with a slash or holds an empty segment, and such a path is answered as one that
            // is not here, as it always was ("workouts/" as the ride with an empty id).
            if path.count > 1, path.hasSuffix("/") || path.contains("//") { throw HTTPError(.notFound) }
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            if path.hasPrefix(MirrorResponder.apiPrefix), await DeviceAuthentication.device(of: request, devices) == nil
            {
                return DeviceAuthentication.unpaired
            }
            if path == MirrorResponder.apiPrefix + "workouts/" {
                return MirrorResponder.error(.notFound, HistoryAPI.Exchange.noSuchRide(""))
            }
            return MirrorResponder.error(.notFound, "no \(request.method) \(path) here")
        }
    }
}

/// Routes of a paired device: the request's token (cookie `cyclelog`, or `Authorization: Bearer`) names the
/// device, which the context then carries; 401 without one.
struct DeviceAuthentication: RouterMiddleware {
    typealias Context = MirrorContext
    let devices: DeviceRegistry

    static let unpaired = MirrorResponder.error(
        .unauthorized, "pair this device first (`cyclelog-mirror pair` on the recorder)")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let (device, byCookie) = await Self.device(of: request, devices) else { return Self.unpaired }
        var context = context
        context.device = device
        context.deviceByCookie = byCookie
        return try await next(request, context)
    }

    /// The device of the request's token, and whether it came as the cookie (a browser) or a bearer header.
    static func device(of request: Request, _ devices: DeviceRegistry) async -> (DeviceRegistry.Device, Bool)? {
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            return await devices.device(token: String(header.dropFirst(7))).map { ($0, false) }
        }
        for field in request.headers[values: .cookie] {
            for pair in field.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == MirrorResponder.cookieName {
                    return await devices.device(token: String(parts[1])).map { ($0, true) }
                }
            }
        }
        return nil
    }
}

/// Controls need a device granted one of the types that write (intake, the ride's controls, the trainer's); which
/// one a control needs is checked once it is read.
struct ControlScope: RouterMiddleware {
    typealias Context = MirrorContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let device = context.device, !device.types.isDisjoint(with: [.intake, .ride, .trainer]) else {
            return MirrorResponder.error(.forbidden, "\(context.device?.name ?? "this device") is paired to read only")
        }
        return try await next(request, context)
    }
}

/// A browser's POST must be JSON and (`needsMarker`) carry `X-Cyclelog-Request: 1`: a form on another site can
/// send neither without the browser asking first (CORS), and this mirror never says yes. A bearer token is no
/// browser's, so its requests are not asked.
struct BrowserPost: RouterMiddleware {
    typealias Context = MirrorContext
    var needsMarker = true

    static let markerHeader = HTTPField.Name("X-Cyclelog-Request")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard context.device == nil || context.deviceByCookie else { return try await next(request, context) }
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/json") else {
            return MirrorResponder.error(.forbidden, "send JSON (Content-Type: application/json)")
        }
        guard !needsMarker || request.headers[Self.markerHeader] == "1" else {
            return MirrorResponder.error(.forbidden, "a control needs the header X-Cyclelog-Request: 1")
        }
        return try await next(request, context)
    }
}

/// At most the limiter's attempts a minute per key: the pairing routes count by the client's address (guessing a
/// code), the control route by the device (a screen gone wild).
struct AttemptLimit: RouterMiddleware {
    typealias Context = MirrorContext
    enum Key { case address, device }

    let limiter: AttemptLimiter
    let key: Key
    /// What the refusal says, after "too many".
    let what: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let key = self.key == .address ? context.remoteAddress : context.device?.tokenSHA256 ?? ""
        guard await limiter.allow(key) else {
            return MirrorResponder.error(.tooManyRequests, "too many \(what): wait a minute")
        }
        return try await next(request, context)
    }
}
