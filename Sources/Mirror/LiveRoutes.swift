import DBus
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RecorderInterface
import ServiceLifecycle
import Workouts

/// The live ride under `/api/v1` (Docs/reference/http-api.md, "The live ride"): `status` (the snapshot), `stream`
/// (server-sent events), each holding only the types the device was granted, and `control` (a control to the
/// recorder's D-Bus `Control`, at most 120 a minute per device, each only for a device granted its type).
struct LiveRoutes {
    let hub: MirrorHub
    let recorder: RecorderLink
    let controlAttempts = AttemptLimiter(limit: 120)

    static let lastEventIDHeader = HTTPField.Name("Last-Event-ID")!

    var routes: RouteCollection<MirrorContext> {
        let routes = RouteCollection(context: MirrorContext.self)
        routes.get("status") { _, context in
            guard let status = await hub.status(context.device?.types ?? []) else { return await noRecorder() }
            return MirrorResponder.json(.ok, status)
        }
        routes.get("stream") { request, context in
            guard let device = context.device else { return DeviceAuthentication.unpaired }
            return await stream(request, device: device)
        }
        routes.group()
            .add(middleware: ControlScope())
            .add(middleware: BrowserPost())
            .add(middleware: AttemptLimit(limiter: controlAttempts, key: .device, what: "controls"))
            .post("control") { request, context in
                var request = request
                return await control(&request, device: context.device)
            }
        return routes
    }

    private func stream(_ request: Request, device: DeviceRegistry.Device) async -> Response {
        // The browser sends the header when its `EventSource` reconnects by itself; the page, when it opens a new
        // one over a connection that went silent, passes the same id in the query.
        let lastEventID =
            request.headers[Self.lastEventIDHeader] ?? request.uri.queryParameters.get("lastEventId").map { String($0) }
        var subscribed = await hub.subscribe(device: device.tokenSHA256, types: device.types, lastEventID: lastEventID)
        if subscribed == nil {
            // A screen that went away is noticed only when something is written to it, and with no ride running
            // that is the keep-alive every 15 s: write to every stream now, twice (the first write to a closed
            // socket still succeeds and only draws the peer's reset; the second fails), give the dead ones a
            // moment to let go of their places, and ask again.
            for _ in 0..<2 {
                await hub.keepAlive()
                try? await Task.sleep(for: .milliseconds(150))
            }
            subscribed = await hub.subscribe(device: device.tokenSHA256, types: device.types, lastEventID: lastEventID)
        }
        guard let client = subscribed else {
            return MirrorResponder.error(
                .serviceUnavailable, "too many screens are open (at most \(hub.maximumClients))")
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

    /// What a start with the hub passes on to the apps on it: every measurement the hub sends, and the trainer.
    static let hubTypes: Set<DataType> = [.power, .cadence, .speed, .hr, .trainer]

    /// `POST /api/v1/control`: `{"requestId", "command", "expect", "workoutId", "args"}` to the recorder's
    /// `Control`.
    private func control(_ request: inout Request, device: DeviceRegistry.Device?) async -> Response {
        let body: ControlBody
        do {
            body = try await MirrorResponder.body(
                &request,
                usage: "send {\"requestId\", \"command\", \"expect\", \"workoutId\", \"args\"}; args' values are "
                    + "strings, numbers or true/false")
        } catch { return error.response }
        // Read as the recorder reads it (the one decoding): a command that cannot be read is refused here, before
        // anything else is asked, in the words the recorder would use.
        let command: RecorderCommand
        do throws(DBusError) {
            command = try RecorderCommand(name: body.command, arguments: (body.args ?? [:]).mapValues(\.dbusValue))
        } catch { return MirrorResponder.error(.badRequest, error.message) }
        guard let device, device.types.contains(command.dataType) else {
            return MirrorResponder.error(
                .forbidden,
                "\(device?.name ?? "this device") is not granted \(command.dataType.rawValue) "
                    + "(`cyclelog-mirror grant NAME +\(command.dataType.rawValue)` on the recorder)")
        }
        // The hub re-broadcasts every sensor, heart rate too, to the apps in Bluetooth range, and lets them steer the
        // trainer: a start that turns it on needs all of that.
        if case .start(let style) = command, case .flag(true)? = style["hub"],
            let missing = Self.hubTypes.subtracting(device.types).sorted(by: { $0.rawValue < $1.rawValue }).first
        {
            return MirrorResponder.error(
                .forbidden,
                "\(device.name) is not granted \(missing.rawValue), which a start with the hub needs: the hub "
                    + "passes every sensor and the trainer to the apps in Bluetooth range "
                    + "(`cyclelog-mirror grant NAME +\(missing.rawValue)` on the recorder)")
        }
        guard await hub.recorderPresent else { return await noRecorder() }
        if case .undo(let action) = command {
            // An undo writes what its action wrote: the offered action's type, or (an older one, whose type the
            // screen cannot know) every type an action can have.
            let offer = await hub.undoOffer
            let needed: Set<DataType> =
                action == nil || action == offer.id ? Set([offer.type].compactMap { $0 }) : [.intake, .trainer]
            if let missing = needed.subtracting(device.types).sorted(by: { $0.rawValue < $1.rawValue }).first {
                return MirrorResponder.error(
                    .forbidden,
                    "\(device.name) is not granted \(missing.rawValue), which undoing it needs "
                        + "(`cyclelog-mirror grant NAME +\(missing.rawValue)` on the recorder)")
            }
        }
        // A start begins a ride of its own: the ride a screen last saw cannot be over for it.
        let startsARide = if case .start = command { true } else { false }
        if let workoutId = body.workoutId, !startsARide, workoutId != (await hub.current).workoutId {
            return await stale("the ride changed: workout \(workoutId) is over", device.types)
        }
        do {
            let answer = try await recorder.control(requestId: body.requestId, command, expect: body.expect ?? 0)
            return MirrorResponder.json(
                .ok,
                .object([
                    ("applied", .bool(!answer.duplicate)), ("duplicate", .bool(answer.duplicate)),
                    ("state", .string(answer.state?.rawValue ?? "")),
                    ("controlSequence", .integer(Int64(clamping: answer.controlSequence))),
                ]))
        } catch {
            switch error.name {
            case RecorderControl.staleError: return await stale(error.message, device.types)
            case RecorderControl.refusedError, RecorderControl.noSensorsError:
                return MirrorResponder.error(.conflict, error.message)
            case DBusError.invalidArgumentsName: return MirrorResponder.error(.badRequest, error.message)
            case DBusError.noReplyName, DBusError.timeoutName:
                return MirrorResponder.error(.gatewayTimeout, "the recorder did not answer within 2 s")
            case let name where RecorderControl.isMissing(DBusError(name: name, message: "")):
                return await noRecorder()
            default: return MirrorResponder.error(.badGateway, "the recorder said: \(error.description)")
            }
        }
    }

    /// 412 with the current status, so that the screen shows what is true before it asks again.
    private func stale(_ message: String, _ types: Set<DataType>) async -> Response {
        MirrorResponder.json(
            .preconditionFailed,
            .object([("error", .string(message)), ("status", await hub.status(types) ?? .null)]))
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

    /// 503 with what to do: start a recorder, or (while the mirror cannot reach its bus) why and what to run.
    func noRecorder() async -> Response {
        if let reason = await recorder.unreachable { return MirrorResponder.error(.serviceUnavailable, reason) }
        return MirrorResponder.error(
            .serviceUnavailable,
            "no recorder is running on \(recorder.bus): start one with `cyclelog record --wait` "
                + "(or `systemctl start cyclelog`)")
    }
}
