import DBus
import Foundation
import Workouts

/// The recorder's D-Bus interface: the Linux counterpart of the Siri / App Intents workout controls. Other
/// processes (the shell, a desktop shortcut, a script) pause, resume, lap, end or cancel the ride, and mirror
/// it from the properties, which announce every change with `PropertiesChanged`.
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

    /// The methods, in the order the README lists them, with the control each one applies.
    public static let methods: [(name: String, control: WorkoutControl)] = [
        ("Pause", .pause), ("Resume", .resume), ("Lap", .lap), ("End", .end), ("Cancel", .cancel),
    ]

    /// Property names and D-Bus types. Measurements not known (no sensor for them, or a gap) are NaN.
    public static let properties: [ExportedInterface.Property] = [
        .init("State", "s"), .init("WorkoutId", "x"), .init("ElapsedSeconds", "d"), .init("MovingSeconds", "d"),
        .init("PowerWatts", "d"), .init("CadenceRPM", "d"), .init("SpeedMetersPerSecond", "d"),
        .init("HeartRateBPM", "d"), .init("DistanceMeters", "d"), .init("Lap", "u"),
    ]

    /// The property values of a status.
    public static func values(_ status: LiveStatus) -> [String: DBusValue] {
        [
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
    public static func export(on connection: DBusConnection, recorder: LiveRecorder, controlGroup: String? = nil)
        async throws(DBusError) -> Exported
    {
        let (accepted, acceptedControls) = AsyncStream<WorkoutControl>.makeStream()
        let owner = getuid()
        let handlers = methods.map { entry in
            ExportedInterface.Method(entry.name) { (call) throws(DBusError) -> [DBusValue] in
                let caller = try await connection.unixUser(of: call.sender)
                guard caller == owner || caller == 0 || controlGroup.map({ isMember(caller, of: $0) }) == true else {
                    let who = controlGroup.map { " and members of the group \($0)" } ?? ""
                    throw DBusError(
                        name: DBusError.accessDeniedName,
                        message: "only the user who runs the recorder (uid \(owner))\(who) may control it")
                }
                if let refusal = await recorder.refusal(of: entry.control) {
                    throw DBusError(name: refusedError, message: refusal)
                }
                // Applied by `serve` after the reply is on its way: End and Cancel finish the recorder, and the
                // caller should hear "done" rather than see the recorder leave the bus without an answer.
                acceptedControls.yield(entry.control)
                return []
            }
        }
        let initial = values(await recorder.status())
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
