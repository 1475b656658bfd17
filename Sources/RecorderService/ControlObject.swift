import DBus
import Formats
import Foundation
import LiveRecording
import RecorderInterface
import Workouts

/// The recorder's side of its D-Bus interface (RecorderInterface names it): the exported object and the
/// commands it performs.
extension RecorderControl {
    /// The exported object: its connection, and the controls it accepted, which `serve` carries out.
    public struct Exported: Sendable {
        public let connection: DBusConnection
        let accepted: AsyncStream<Accepted>
    }

    /// An End (at once or not) or a Cancel, carried out once its reply is on its way.
    struct Accepted: Sendable {
        var control: WorkoutControl
        var endsAtOnce: Bool
    }

    /// Owns the bus name and exports the object (`serve` then keeps it working). Fails when another recorder
    /// already owns the name.
    public static func export(on connection: DBusConnection, recorder: LiveRecorder, controlGroup: String? = nil)
        async throws(DBusError) -> Exported
    {
        let (accepted, acceptedControls) = AsyncStream<Accepted>.makeStream()
        let commands = Commands(recorder: recorder, connection: connection, accepted: acceptedControls)
        let requests = ControlRequests()
        let owner = getuid()
        /// Every method checks its caller first.
        @Sendable func checkCaller(_ call: ExportedInterface.Call) async throws(DBusError) {
            try await RecorderControl.checkCaller(
                call, on: connection, owner: owner, group: controlGroup, what: "recorder")
        }
        /// A method that checks its caller and performs one command with the arguments `read` makes of its call.
        func method(
            _ name: String, in inArguments: [ExportedInterface.Argument] = [],
            out outArguments: [ExportedInterface.Argument] = [], command: String,
            _ read: @escaping @Sendable ([DBusValue]) -> [String: DBusValue] = { _ in [:] },
            reply: @escaping @Sendable (Int64) -> [DBusValue] = { _ in [] }
        ) -> ExportedInterface.Method {
            ExportedInterface.Method(name, in: inArguments, out: outArguments) {
                (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                return reply(try await commands.perform(command, read(call.body)))
            }
        }
        var handlers = methods.map { method($0.name, command: $0.control.name) }
        handlers += [
            method(
                "Start", in: [.init("style", "a{sv}")], out: [.init("workoutId", "x")], command: "start",
                { $0.first?.dictionary ?? [:] }, reply: { [.int64($0)] }),
            method("Marker", in: [.init("text", "s")], command: "marker") { ["text": $0.first ?? .string("")] },
            ExportedInterface.Method("Undo", in: [.init("action", "x")], out: [.init("undone", "s")]) {
                (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let action = call.body.first?.integer ?? 0
                return [.string(try await commands.undo(action == 0 ? nil : action))]
            },
            method(
                "Intake", in: [.init("kind", "s"), .init("amount", "d"), .init("unit", "s")], command: "intake"
            ) { body in Dictionary(uniqueKeysWithValues: zip(["kind", "amount", "unit"], body)) },
            ExportedInterface.Method(
                "Control",
                in: [.init("requestId", "s"), .init("command", "s"), .init("expect", "t"), .init("args", "a{sv}")],
                out: [.init("state", "s"), .init("controlSequence", "t"), .init("duplicate", "b")],
                inArrivalOrder: true
            ) { (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let (answer, duplicate) = try await requests.answer(call.body) {
                    let status = await recorder.status()
                    return ControlRequests.Answer(state: status.state, controlSequence: status.controlSequence)
                } perform: { (command) throws(DBusError) in
                    _ = try await commands.perform(command)
                }
                return [.string(answer.state.rawValue), .uint64(answer.controlSequence), .boolean(duplicate)]
            },
        ]
        handlers += hubMethods(recorder, checkCaller: checkCaller)
        // The Desktop Entry Specification's D-Bus activation: a launcher's actions arrive here.
        let application = ExportedInterface(
            name: applicationInterface,
            methods: [
                ExportedInterface.Method("Activate", in: [.init("platformData", "a{sv}")]) { _ in [] },
                ExportedInterface.Method("Open", in: [.init("uris", "as"), .init("platformData", "a{sv}")]) { _ in [] },
                ExportedInterface.Method(
                    "ActivateAction",
                    in: [.init("action", "s"), .init("parameter", "av"), .init("platformData", "a{sv}")]
                ) { (call) throws(DBusError) -> [DBusValue] in
                    try await checkCaller(call)
                    try await commands.activate(
                        call.body.first?.string ?? "", parameter: call.body.dropFirst().first?.stringArray ?? [])
                    return []
                },
            ])
        // Read once before the export, so that the first properties offer them (then the recorder reads them).
        _ = await recorder.presets()
        let initial = await recorder.status().published.values
        try await connection.export(
            [
                ExportedInterface(name: interface, methods: handlers, properties: properties, signals: signals),
                application,
            ], at: path, properties: [interface: initial])
        do {
            try await connection.requestName(busName)
        } catch {
            await connection.unexport(path)
            acceptedControls.finish()
            throw DBusError(
                name: error.name,
                message: "another cyclelog recorder is running (it owns \(busName)); end it first with `cyclelog end`")
        }
        return Exported(connection: connection, accepted: accepted)
    }

    /// The commands every caller shares (the methods, `Control`, the launcher's actions), each one a
    /// `RecorderCommand`; each refusal is a D-Bus error that names what was wrong.
    struct Commands: Sendable {
        let recorder: LiveRecorder
        let connection: DBusConnection
        let accepted: AsyncStream<Accepted>.Continuation

        /// Reads and performs a command by name (a method's, `Control`'s); the new workout's id for a start.
        func perform(_ name: String, _ arguments: [String: DBusValue]) async throws(DBusError) -> Int64 {
            try await perform(RecorderCommand(name: name, arguments: arguments))
        }

        /// Performs `command`; the new workout's id for a start (0 while armed), else 0.
        func perform(_ command: RecorderCommand) async throws(DBusError) -> Int64 {
            let ending: Accepted? =
                switch command {
                case .control(.end): Accepted(control: .end, endsAtOnce: false)
                case .control(.cancel): Accepted(control: .cancel, endsAtOnce: true)
                case .endNow: Accepted(control: .end, endsAtOnce: true)
                default: nil
                }
            if let ending {
                if let refusal = await recorder.refusal(of: ending.control) {
                    throw DBusError(name: refusedError, message: refusal)
                }
                // Applied by `serve` after the reply is on its way: End and Cancel finish the recorder, and the
                // caller should hear "done" rather than see the recorder leave the bus without an answer.
                accepted.yield(ending)
                return 0
            }
            do throws(LiveRecorder.CommandRefusal) {
                let id = try await recorder.perform(command)
                // The caller may read the properties as soon as it has the reply (`cyclelog water` says the total):
                // they show what the command did before the reply goes, not when `mirror` next gets to them.
                await RecorderControl.showLatest(recorder, on: connection)
                return id
            } catch {
                switch error {
                case .invalid(let reason): throw DBusError(name: DBusError.invalidArgumentsName, message: reason)
                case .refused(let reason): throw DBusError(name: refusedError, message: reason)
                case .noSensors(let reason): throw DBusError(name: noSensorsError, message: reason)
                }
            }
        }

        /// `Undo`: what was undone, in words.
        func undo(_ action: Int64?) async throws(DBusError) -> String {
            switch await recorder.undo(action) {
            case .success(let words):
                await RecorderControl.showLatest(recorder, on: connection)
                return words
            case .failure(let refusal):
                throw DBusError(name: refusedError, message: refusal.reason)
            }
        }

        /// `ActivateAction`: `start` (with a preset's id as its parameter, or none for an open ride), `start-ID`,
        /// `pause`, `resume`, `lap`, `end`.
        func activate(_ action: String, parameter: [String]) async throws(DBusError) {
            if action == "start" || action.hasPrefix("start-") {
                let preset = action == "start" ? parameter.first : String(action.dropFirst(6))
                _ = try await perform("start", preset.map { ["preset": .string($0)] } ?? [:])
                return
            }
            guard DesktopIntegration.controlActions.contains(where: { $0.0 == action }) else {
                throw DBusError(
                    name: DBusError.invalidArgumentsName,
                    message: "no action '\(ShownText.cut(action, to: 40))': start, start-PRESET, "
                        + DesktopIntegration.controlActions.map(\.0).joined(separator: ", "))
            }
            _ = try await perform(action, [:])
        }
    }

    /// `HubAppJoined`, `HubAppWrote`, `HubAppWroteSpeedAndCadence` and `HubAppLeft`: a hub in another process
    /// passing its apps to the recorder, each argument held to its limit before the recorder hears of it.
    static func hubMethods(
        _ recorder: LiveRecorder,
        checkCaller: @escaping @Sendable (ExportedInterface.Call) async throws(DBusError) -> Void
    ) -> [ExportedInterface.Method] {
        @Sendable func text(_ value: DBusValue?, _ name: String) throws(DBusError) -> String {
            guard let text = value?.string, text.utf8.count <= hubTextBytes else {
                throw DBusError(
                    name: DBusError.invalidArgumentsName,
                    message: "\(name) takes a string of at most \(hubTextBytes) bytes")
            }
            return text
        }
        @Sendable func value(_ value: DBusValue?) throws(DBusError) -> [UInt8] {
            guard let bytes = value?.byteArray, bytes.count <= hubValueBytes else {
                throw DBusError(
                    name: DBusError.invalidArgumentsName, message: "value takes at most \(hubValueBytes) bytes")
            }
            return bytes
        }
        @Sendable func app(_ value: DBusValue?) throws(DBusError) -> String {
            let app = try text(value, "app")
            guard !app.isEmpty else { throw DBusError(name: DBusError.invalidArgumentsName, message: "app is empty") }
            return app
        }
        return [
            ExportedInterface.Method(
                "HubAppJoined", in: [.init("app", "s"), .init("name", "s"), .init("transport", "s")],
                out: [.init("values", "a(qay)")]
            ) { (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let (address, name) = (try app(call.body.first), try text(call.body.dropFirst().first, "name"))
                let transport = call.body.dropFirst(2).first?.string ?? ""
                guard hubTransports.contains(transport) else {
                    throw DBusError(
                        name: DBusError.invalidArgumentsName,
                        message:
                            "transport takes \(hubTransports.joined(separator: " or ")), not '\(ShownText.cut(transport, to: 20))'"
                    )
                }
                let values = await recorder.appJoined(address, name: name.isEmpty ? nil : name, transport: transport)
                return [
                    .array(
                        elementSignature: "(qay)",
                        values.map { .structure(hubValueFields($0.characteristic, $0.value)) })
                ]
            },
            ExportedInterface.Method("HubAppWrote", in: [.init("app", "s"), .init("value", "ay")]) {
                (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let address = try app(call.body.first)
                await recorder.appWrote(try value(call.body.dropFirst().first), by: address)
                return []
            },
            ExportedInterface.Method(
                "HubAppWroteSpeedAndCadence", in: [.init("app", "s"), .init("value", "ay")],
                out: [.init("answer", "ay")]
            ) { (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let address = try app(call.body.first)
                let written = try value(call.body.dropFirst().first)
                return [.bytes(await recorder.appWroteSpeedAndCadence(written, by: address))]
            },
            ExportedInterface.Method("HubAppLeft", in: [.init("app", "s")]) {
                (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                await recorder.appLeft(try app(call.body.first))
                return []
            },
        ]
    }

    /// Carries out the controls the object accepts, one after the other, and keeps its properties equal to the
    /// recorder's status, until the recorder ends or the calling task is cancelled.
    public static func serve(_ exported: Exported, for recorder: LiveRecorder) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await ending in exported.accepted {
                    await recorder.control(ending.control, endsAtOnce: ending.endsAtOnce)
                }
            }
            group.addTask { await mirror(recorder, on: exported.connection) }
            group.addTask {
                for await reading in recorder.live.subscribe() {
                    _ = try? await exported.connection.send(
                        .signal(path: path, interface: interface, member: "Live", body: [reading.signalValue]))
                }
            }
            group.addTask {
                for await message in recorder.toApps.subscribe() {
                    // A reading's values go on the bus for a hub in another process (DirCon) only when it has an app.
                    if case .readings(_, overDirCon: false) = message { continue }
                    for (characteristic, value) in message.characteristicValues {
                        _ = try? await exported.connection.send(
                            .signal(
                                path: path, interface: interface, member: "HubSend",
                                body: hubValueFields(characteristic, value)))
                    }
                }
            }
            group.addTask {
                for await applied in recorder.controlsApplied.subscribe() {
                    _ = try? await exported.connection.send(
                        .signal(path: path, interface: interface, member: "Event", body: [applied.signalValue]))
                }
            }
            // The mirror ends with the recorder's status stream, that is with the recorder.
            await group.next()
            group.cancelAll()
        }
    }

    /// Keeps the exported properties equal to the recorder's status, announcing each change with
    /// `PropertiesChanged`, until the recorder ends or the calling task is cancelled.
    static func mirror(_ recorder: LiveRecorder, on connection: DBusConnection) async {
        for await _ in recorder.statusUpdates.subscribe() { await showLatest(recorder, on: connection) }
    }

    /// Sets the properties to the newest status published. Read when the connection sets them, so that this
    /// stream and a command's reply, each setting the newest, never put an older status back.
    static func showLatest(_ recorder: LiveRecorder, on connection: DBusConnection) async {
        try? await connection.setProperties(interface: interface, path: path) {
            recorder.statusUpdates.latest?.published.values ?? [:]
        }
    }
}

/// `Control`'s memory of request ids, for callers on links that drop: a request repeated with the same id gets
/// the first answer (`duplicate`) and is not applied again. Only answered requests are kept (a refused one may
/// be tried again), the newest `capacity` of them. The connection hands `Control` calls over one at a time in the
/// order they arrived (`inArrivalOrder`), so that two screens tapping Lap with the same `expect` give one lap and
/// one `Stale`, and a retry queued behind its first attempt is the one told `duplicate`.
actor ControlRequests {
    struct Answer: Sendable, Equatable {
        var state: RecorderState
        var controlSequence: UInt64
    }

    private let capacity: Int
    private var answers: [String: Answer] = [:]
    private var order: [String] = []

    init(capacity: Int = 1024) { self.capacity = capacity }

    /// `Control(requestId, command, expect, args)`: the answer, and whether it was given before. `status` is the
    /// recorder's state and control sequence now; `perform` carries the command out.
    func answer(
        _ body: [DBusValue], status: @Sendable () async -> Answer,
        perform: @Sendable (RecorderCommand) async throws(DBusError) -> Void
    ) async throws(DBusError) -> (Answer, Bool) {
        let requestId = body.first?.string ?? ""
        guard (1...200).contains(requestId.utf8.count) else {
            throw DBusError(name: DBusError.invalidArgumentsName, message: "requestId takes 1 to 200 bytes")
        }
        if let answer = answers[requestId] { return (answer, true) }
        // Read first: a command that cannot be read is refused as such, whatever its `expect` (as HTTP refuses a
        // malformed request before it checks its preconditions).
        let command = try RecorderCommand(
            name: body.dropFirst().first?.string ?? "", arguments: body.dropFirst(3).first?.dictionary ?? [:])
        let expect: UInt64 = if case .uint64(let value)? = body.dropFirst(2).first { value } else { 0 }
        let seen = await status()
        let before = seen.controlSequence
        guard expect == 0 || expect == before else {
            throw DBusError(
                name: RecorderControl.staleError,
                message: "expected control sequence \(expect), but the recorder is at \(before): the ride changed "
                    + "since (read ControlSequence again)")
        }
        try await perform(command)
        var answer = await status()
        switch command {
        case .control(.end), .endNow:
            // Carried out by `serve` just after this reply (or already, as the tasks run): its outcome. A second End,
            // which saves a ride ended already, adds no control; whether it is one is read from before the call.
            answer = Answer(state: .ended, controlSequence: seen.state == .ended ? before : before + 1)
        case .control(.cancel):
            answer = Answer(state: .cancelled, controlSequence: before + 1)
        default: break
        }
        answers[requestId] = answer
        order.append(requestId)
        if order.count > capacity { answers[order.removeFirst()] = nil }
        return (answer, false)
    }
}
