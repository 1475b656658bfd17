import DBus
import Foundation
import Workouts

/// The recorder's D-Bus interface: the Linux counterpart of the Siri / App Intents workout controls. Other
/// processes (the shell, a desktop shortcut, a script, a second screen) start a ride with a style, pause,
/// resume, lap, end or cancel it, mark it and log water, and mirror it from the properties, which announce
/// every change with `PropertiesChanged`.
///
///     bus name   org.cyclelog.Recorder   (session bus; the system bus for the service)
///     object     /org/cyclelog/Recorder
///     interface  org.cyclelog.Recorder1
///
/// Only the Unix user who runs the recorder (and root) may call the methods, plus the members of a chosen group
/// when one is given (the service: riders in the `cyclelog` group control the service's rides); anyone allowed
/// on the bus may read. The system bus's policy file (dbus/org.cyclelog.Recorder.conf) says the same.
public enum RecorderControl {
    public static let busName = "org.cyclelog.Recorder"
    public static let path = "/org/cyclelog/Recorder"
    public static let interface = "org.cyclelog.Recorder1"
    public static let refusedError = "org.cyclelog.Error.Refused"
    public static let noSensorsError = "org.cyclelog.Error.NoSensors"

    /// The methods, in the order the README lists them, with the control each one applies.
    public static let methods: [(name: String, control: WorkoutControl)] = [
        ("Pause", .pause), ("Resume", .resume), ("Lap", .lap), ("End", .end), ("Cancel", .cancel),
    ]

    /// Property names and D-Bus types. Measurements not known (no sensor for them, or a gap) are NaN; so is
    /// GoalProgress of a ride without a goal. Name, Location and Goal are empty when not set.
    public static let properties: [ExportedInterface.Property] = [
        .init("State", "s"), .init("WorkoutId", "x"), .init("ElapsedSeconds", "d"), .init("MovingSeconds", "d"),
        .init("PowerWatts", "d"), .init("CadenceRPM", "d"), .init("SpeedMetersPerSecond", "d"),
        .init("HeartRateBPM", "d"), .init("DistanceMeters", "d"), .init("Lap", "u"), .init("Name", "s"),
        .init("Location", "s"), .init("Goal", "s"), .init("GoalProgress", "d"), .init("LapElapsedSeconds", "d"),
        .init("WorkJoules", "d"), .init("WaterMillilitres", "d"), .init("CanStart", "b"), .init("CanPause", "b"),
        .init("CanResume", "b"), .init("CanLap", "b"), .init("CanEnd", "b"), .init("CanCancel", "b"),
        .init("SuggestedWorkouts", "a(ssa{sv})"),
    ]

    /// `SuggestedWorkouts`: each preset's id, title and style.
    public static func suggestedWorkouts(_ presets: [WorkoutPreset]) -> DBusValue {
        .array(
            elementSignature: "(ssa{sv})",
            presets.map { preset in
                .structure([
                    .string(preset.id), .string(preset.title),
                    .properties(preset.request.style.map { ($0.key, dbusValue($0.value)) }),
                ])
            })
    }

    private static func dbusValue(_ value: StartRequest.Value) -> DBusValue {
        switch value {
        case .text(let text): .string(text)
        case .flag(let flag): .boolean(flag)
        case .other: .string("")
        }
    }

    /// A style's value as `StartRequest` reads it.
    private static func styleValue(_ value: DBusValue) -> StartRequest.Value {
        switch value.unwrapped {
        case .string(let text): .text(text)
        case .boolean(let flag): .flag(flag)
        case let other: .other(signature: other.signature)
        }
    }

    /// The property values of a status.
    public static func values(_ status: LiveStatus) -> [String: DBusValue] {
        [
            "Name": .string(status.plan.name ?? ""), "Location": .string(status.plan.location?.rawValue ?? ""),
            "Goal": .string(status.plan.goal?.description ?? ""), "GoalProgress": .double(status.goalProgress ?? .nan),
            "LapElapsedSeconds": .double(status.lapElapsedSeconds.rounded()),
            "WorkJoules": .double(status.workJoules.rounded()), "WaterMillilitres": .double(status.waterMillilitres),
            "CanStart": .boolean(status.can.start), "CanPause": .boolean(status.can.pause),
            "CanResume": .boolean(status.can.resume), "CanLap": .boolean(status.can.lap),
            "CanEnd": .boolean(status.can.end), "CanCancel": .boolean(status.can.cancel),
            "State": .string(status.state), "WorkoutId": .int64(status.workoutId),
            "ElapsedSeconds": .double(status.elapsedSeconds.rounded()),
            "MovingSeconds": .double(status.movingSeconds.rounded()),
            "PowerWatts": .double(status.powerWatts ?? .nan), "CadenceRPM": .double(status.cadenceRPM ?? .nan),
            "SpeedMetersPerSecond": .double(status.speedMetersPerSecond ?? .nan),
            "HeartRateBPM": .double(status.heartRateBPM ?? .nan), "DistanceMeters": .double(status.distanceMeters),
            "Lap": .uint32(UInt32(clamping: status.lap)),
        ]
    }

    /// The exported object: its connection, and the controls it accepted, which `serve` carries out.
    public struct Exported: Sendable {
        public let connection: DBusConnection
        let accepted: AsyncStream<WorkoutControl>
    }

    /// Owns the bus name and exports the object (`serve` then keeps it working). Fails when another recorder
    /// already owns the name.
    public static func export(
        on connection: DBusConnection, recorder: LiveRecorder, controlGroup: String? = nil,
        presets: [WorkoutPreset] = WorkoutPreset.builtIn
    ) async throws(DBusError) -> Exported {
        let (accepted, acceptedControls) = AsyncStream<WorkoutControl>.makeStream()
        let owner = getuid()
        /// Every method checks its caller first.
        @Sendable func checkCaller(_ call: ExportedInterface.Call) async throws(DBusError) {
            let caller = try await connection.unixUser(of: call.sender)
            guard caller == owner || caller == 0 || controlGroup.map({ isMember(caller, of: $0) }) == true else {
                let who = controlGroup.map { " and members of the group \($0)" } ?? ""
                throw DBusError(
                    name: DBusError.accessDeniedName,
                    message: "only the user who runs the recorder (uid \(owner))\(who) may control it")
            }
        }
        var handlers = methods.map { entry in
            ExportedInterface.Method(entry.name) { (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                if let refusal = await recorder.refusal(of: entry.control) {
                    throw DBusError(name: refusedError, message: refusal)
                }
                // Applied by `serve` after the reply is on its way: End and Cancel finish the recorder, and the
                // caller should hear "done" rather than see the recorder leave the bus without an answer.
                acceptedControls.yield(entry.control)
                return []
            }
        }
        handlers.append(
            ExportedInterface.Method("Start", in: [.init("style", "a{sv}")], out: [.init("workoutId", "x")]) {
                (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let style = (call.body.first?.dictionary ?? [:]).mapValues(styleValue)
                let request: StartRequest
                do throws(StartRequest.Problem) { request = try StartRequest(style: style, presets: presets) } catch {
                    throw DBusError(name: DBusError.invalidArgumentsName, message: error.description)
                }
                do throws(LiveRecorder.StartRefusal) { return [.int64(try await recorder.start(request))] } catch {
                    switch error {
                    case .refused(let reason): throw DBusError(name: refusedError, message: reason)
                    case .noSensors(let reason): throw DBusError(name: noSensorsError, message: reason)
                    }
                }
            })
        handlers.append(
            ExportedInterface.Method("Marker", in: [.init("text", "s")]) { (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let text = call.body.first?.string ?? ""
                guard (1...200).contains(text.count) else {
                    throw DBusError(name: DBusError.invalidArgumentsName, message: "text takes 1 to 200 characters")
                }
                if let refusal = await recorder.control(.marker(text)) {
                    throw DBusError(name: refusedError, message: refusal)
                }
                return []
            })
        handlers.append(
            ExportedInterface.Method("Intake", in: [.init("kind", "s"), .init("amount", "d"), .init("unit", "s")]) {
                (call) throws(DBusError) -> [DBusValue] in
                try await checkCaller(call)
                let intake = try intake(call.body)
                if let refusal = await recorder.control(.intake(intake)) {
                    throw DBusError(name: refusedError, message: refusal)
                }
                return []
            })
        var initial = values(await recorder.status())
        initial["SuggestedWorkouts"] = suggestedWorkouts(presets)
        try await connection.export(
            [ExportedInterface(name: interface, methods: handlers, properties: properties)], at: path,
            properties: [interface: initial])
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

    /// `Intake(kind, amount, unit)`'s arguments, or InvalidArgs naming the one that is wrong.
    static func intake(_ body: [DBusValue]) throws(DBusError) -> Intake {
        let kinds = Intake.Kind.allCases.map(\.rawValue).joined(separator: " or ")
        let name = body.first?.string ?? ""
        guard let kind = Intake.Kind(rawValue: name) else {
            throw DBusError(
                name: DBusError.invalidArgumentsName, message: "kind '\(ShownText.cut(name, to: 40))' is not \(kinds)")
        }
        let unit = body.dropFirst(2).first?.string ?? ""
        let units = kind.units.map(\.name)
        guard units.contains(unit.lowercased()) else {
            throw DBusError(
                name: DBusError.invalidArgumentsName,
                message: "unit '\(ShownText.cut(unit, to: 40))' is not one for \(kind.rawValue): \(units.joined(separator: ", "))")
        }
        guard case .double(let amount)? = body.dropFirst().first, let intake = Intake(kind, amount: amount, unit: unit)
        else {
            throw DBusError(name: DBusError.invalidArgumentsName, message: "amount: \(kind.rawValue) takes \(Intake.forms(kind))")
        }
        return intake
    }

    /// Carries out the controls the object accepts, one after the other, and keeps its properties equal to the
    /// recorder's status, until the recorder ends or the calling task is cancelled.
    public static func serve(_ exported: Exported, for recorder: LiveRecorder) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await control in exported.accepted { await recorder.control(control) }
            }
            group.addTask { await mirror(recorder, on: exported.connection) }
            // The mirror ends with the recorder's status stream, that is with the recorder.
            await group.next()
            group.cancelAll()
        }
    }

    /// Keeps the exported properties equal to the recorder's status, announcing each change with
    /// `PropertiesChanged`, until the recorder ends or the calling task is cancelled.
    static func mirror(_ recorder: LiveRecorder, on connection: DBusConnection) async {
        for await status in recorder.statusUpdates.subscribe() {
            try? await connection.setProperties(values(status), interface: interface, path: path)
        }
    }

    /// Whether the user `uid` is in `group`, as its primary group or a supplementary one (/etc/group, NSS).
    public static func isMember(_ uid: UInt32, of group: String) -> Bool {
        guard let groupEntry = getgrnam(group), let user = getpwuid(uid) else { return false }
        let wanted = groupEntry.pointee.gr_gid
        let primary = user.pointee.pw_gid
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(user.pointee.pw_name, primary, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(user.pointee.pw_name, primary, &groups, &count) >= 0 else { return primary == wanted }
        }
        return groups.prefix(Int(count)).contains(wanted)
    }
}
