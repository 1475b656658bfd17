import Formats
import Foundation
import HTTPTypes
import Hummingbird
import Workouts

/// Pairing a screen (Docs/reference/http-api.md, "Pairing"): `GET /pair?t=…` with the one-time link's token, or
/// `POST /api/v1/pair` with the six-digit code; either answers the device's token, as a cookie and (for the code)
/// in JSON. Ten attempts a minute per address; a code's POST must be JSON.
struct PairingRoutes {
    let devices: DeviceRegistry
    /// The page is served over TLS: the cookie is then `Secure`.
    let secure: Bool
    let attempts = AttemptLimiter(limit: 10)

    var routes: RouteCollection<MirrorContext> {
        let routes = RouteCollection(context: MirrorContext.self)
        let limit = AttemptLimit(limiter: attempts, key: .address, what: "pairing attempts")
        routes.group().add(middleware: limit).get("/pair") { request, _ in await pairWithLink(request) }
        routes.group().add(middleware: limit).add(middleware: BrowserPost(needsMarker: false)).post("/api/v1/pair") {
            request, _ in
            var request = request
            return await pairWithCode(&request)
        }
        return routes
    }

    struct PairBody: Decodable {
        var code: String
        var name: String?
        /// The types the page asks for (`DataType.list`); the device is granted those the offer holds.
        var types: String?
    }

    private func pairWithLink(_ request: Request) async -> Response {
        let token = request.uri.queryParameters.get("t") ?? ""
        do {
            let (deviceToken, _) = try await devices.pair(oneTimeToken: token)
            var response = Response(status: .seeOther, headers: [.location: "/", .cacheControl: "no-store"])
            response.headers[.setCookie] = cookie(deviceToken)
            return response
        } catch {
            // A link is opened in a browser: a page that says what to do, not a JSON error.
            var response = MirrorResponder.page(Self.spentLinkPage, images: "'none'")
            response.status = .unauthorized
            return response
        }
    }

    /// What a browser shows for a pairing link that was used or has expired (a link pairs one device, once, within
    /// 120 s): how to pair again, by a new link or by its code on the mirror's page.
    static let spentLinkPage = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>cyclelog: pairing link used or expired</title>
        <style>
        body { font: 18px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 32em; padding: 0 1em;
          color: #1d1d1f; background: #fff; }
        @media (prefers-color-scheme: dark) { body { color: #f2f2f2; background: #111; } a { color: #6cf; } }
        code { font-size: 0.95em; }
        </style></head>
        <body>
        <h1>This pairing link was used or has expired</h1>
        <p>A pairing link pairs one screen, once, within two minutes of being made.</p>
        <p>On the machine that records, run <code>cyclelog-mirror pair</code> again and open its new link, or
        <a href="/">open cyclelog's page</a> and type the six-digit code it prints.</p>
        </body></html>
        """

    private func pairWithCode(_ request: inout Request) async -> Response {
        let body: PairBody
        do {
            body = try await MirrorResponder.body(
                &request, usage: "send {\"code\": \"123456\", \"name\": \"my phone\", \"types\": \"control,hr\"}")
        } catch { return error.response }
        var asking: Set<DataType>?
        if let list = body.types {
            switch DataType.list(String(list.prefix(200))) {
            case .success(let types): asking = types
            case .failure(let error): return MirrorResponder.error(.badRequest, error.description)
            }
        }
        do {
            let (token, device) = try await devices.pair(
                code: body.code, name: body.name.map { String($0.prefix(60)) }, asking: asking)
            var response = MirrorResponder.json(
                .ok,
                .object([
                    ("token", .string(token)), ("name", .string(device.name)),
                    ("types", .array(device.types.sorted().map { .string($0.rawValue) })),
                ]))
            response.headers[.setCookie] = cookie(token)
            return response
        } catch DeviceRegistry.PairingFailure.exhausted {
            return MirrorResponder.error(
                .unauthorized, "five wrong codes: this code is gone; run `cyclelog-mirror pair` again")
        } catch {
            return MirrorResponder.error(.unauthorized, "wrong or expired code")
        }
    }

    private func cookie(_ token: String) -> String {
        "\(MirrorResponder.cookieName)=\(token); Path=/; Max-Age=31536000; HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
    }
}
