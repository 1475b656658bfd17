import DBus
import Formats
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
///
/// This module holds what both sides share, the recorder (LiveRecording) and its clients (the CLI's control
/// verbs, `cyclelog-mirror`), so that a client needs nothing of Bluetooth.
public enum RecorderControl {
    public static let busName = "org.cyclelog.Recorder"
    public static let path = "/org/cyclelog/Recorder"
    public static let interface = "org.cyclelog.Recorder1"
    public static let applicationInterface = "org.freedesktop.Application"
    public static let refusedError = "org.cyclelog.Error.Refused"
    public static let noSensorsError = "org.cyclelog.Error.NoSensors"
    /// `Control`'s `expect` is not the recorder's `ControlSequence`: the ride changed since the caller looked.
    public static let staleError = "org.cyclelog.Error.Stale"

    /// `Live`: one per decoded notification, `a{sv}` with `seq` t, `arrivalMicros` x, `sensor` s and the readings
    /// it carried (`powerWatts`, `cadenceRPM`, `speedMetersPerSecond`, `heartRateBPM`, each d).
    /// `Event`: one per control applied to a ride, however many callers asked for it, `a{sv}` with `kind` s (the
    /// control: start, pause, resume, lap, marker, intake, end, cancel), `workoutId` x, `timeMicros` x (Unix
    /// time), `controlSequence` t (the ride's `ControlSequence` with it applied) and the control's own fields: a
    /// start's `name`, `goal`, `location`, `preset`, `test`; a marker's `text`; an intake's `intake` (water,
    /// carbs), `amount` d and `unit` (ml, g).
    public static let signals = [
        ExportedInterface.Signal("Live", [.init("reading", "a{sv}")]),
        ExportedInterface.Signal("Event", [.init("event", "a{sv}")]),
        ExportedInterface.Signal("HubSend", [.init("characteristic", "q"), .init("value", "ay")]),
    ]

    /// The methods through which a sensor hub in another process (DirCon, served by the mirror) passes its apps to
    /// the recorder, as `record --bridge` does within its own: an app connected (its address, its name or "", its
    /// transport), wrote to the Fitness Machine control point or the SC Control Point, or left. What the recorder tells the apps comes back
    /// as `HubSend` signals.
    public static let hubMethods = ["HubAppJoined", "HubAppWrote", "HubAppWroteSpeedAndCadence", "HubAppLeft"]
    /// The transports a hub app may come over.
    public static let hubTransports = ["Bluetooth", "DirCon"]
    /// The longest app address or name taken, in UTF-8 bytes, and the longest write (an attribute's longest value,
    /// Core 5.3 Vol 3 Part F 3.2.9): checked before the recorder is told anything.
    public static let hubTextBytes = 64
    public static let hubValueBytes = 512

    /// A value for one of the hub's characteristics on the bus, as `HubSend` carries it and each of `HubAppJoined`'s
    /// answers holds it: the characteristic (q), its bytes (ay).
    public static func hubValueFields(_ characteristic: UInt16, _ value: [UInt8]) -> [DBusValue] {
        [.uint16(characteristic), .bytes(value)]
    }

    /// The same read back; nil for fields of other types.
    public static func hubValue(_ fields: [DBusValue]) -> (characteristic: UInt16, value: [UInt8])? {
        guard case .uint16(let characteristic)? = fields.first, let value = fields.dropFirst().first?.byteArray
        else { return nil }
        return (characteristic, value)
    }

    /// The methods, in the order Docs/reference/dbus.md lists them, with the control each one applies.
    public static let methods: [(name: String, control: WorkoutControl)] = [
        ("Pause", .pause), ("Resume", .resume), ("Lap", .lap), ("End", .end), ("Cancel", .cancel),
    ]

    /// Property names and D-Bus types (each declared once, in `RecorderStatus.properties`). Measurements not
    /// known (no sensor for them, or a gap) are NaN; so is GoalProgress of a ride without a goal. Name, Location
    /// and Goal are empty when not set.
    public static let properties: [ExportedInterface.Property] = RecorderStatus.properties.map {
        .init($0.name, $0.signature)
    }

    /// A style's value on the bus.
    public static func dbusValue(_ value: StartRequest.Value) -> DBusValue {
        switch value {
        case .text(let text): .string(text)
        case .flag(let flag): .boolean(flag)
        // A value of the type it came as, so that the recorder names that type when it refuses the key: what a
        // caller that reads a style before passing it on (the mirror) sent is refused in the same words as from
        // any other caller.
        case .other(let signature):
            switch signature {
            case "d": .double(0)
            case "x": .int64(0)
            case "t": .uint64(0)
            case "i": .int32(0)
            case "u": .uint32(0)
            case "n": .int16(0)
            case "q": .uint16(0)
            case "y": .byte(0)
            case "o": .objectPath("/")
            case "g": .signature("")
            default: .string("")
            }
        }
    }

    /// A style's value as `StartRequest` reads it.
    public static func styleValue(_ value: DBusValue) -> StartRequest.Value {
        switch value.unwrapped {
        case .string(let text): .text(text)
        case .boolean(let flag): .flag(flag)
        case let other: .other(signature: other.signature)
        }
    }

    /// Whether an error says that no recorder owns the name.
    public static func isMissing(_ error: DBusError) -> Bool {
        [DBusError.serviceUnknownName, "org.freedesktop.DBus.Error.NameHasNoOwner"].contains(error.name)
    }

    // MARK: Reading the properties

    /// A property value as JSON: NaN is null (not known), `Sensors` and `SuggestedWorkouts` become arrays of
    /// objects.
    public static func json(_ name: String, _ value: DBusValue?) -> JSONValue {
        switch value?.unwrapped {
        case .double(let number)?: number.isNaN ? .null : .number(number)
        case .string(let text)?: .string(text)
        case .boolean(let flag)?: .bool(flag)
        case .array(_, let presets)? where name == "SuggestedWorkouts": .array(presets.map(suggestedWorkoutJSON))
        case .array(_, let sensors)? where name == "Sensors": .array(sensors.map(sensorJSON))
        case .array? where name == "shown": .array((value?.unwrapped.stringArray ?? []).map(JSONValue.string))
        case let other?: other.integer.map(JSONValue.integer) ?? .null
        case nil: .null
        }
    }

    /// One of `Sensors`, `(sssi)`: {"name", "address", "state", "batteryPercent"} (null when unknown).
    public static func sensorJSON(_ value: DBusValue) -> JSONValue {
        guard case .structure(let fields) = value, fields.count == 4 else { return .null }
        let battery = fields[3].integer ?? -1
        return .object([
            ("name", .string(fields[0].string ?? "")), ("address", .string(fields[1].string ?? "")),
            ("state", .string(fields[2].string ?? "")), ("batteryPercent", battery < 0 ? .null : .integer(battery)),
        ])
    }

    /// One of `SuggestedWorkouts`, `(ssa{sv})`: {"id", "title", "style": {…}}.
    public static func suggestedWorkoutJSON(_ value: DBusValue) -> JSONValue {
        guard case .structure(let fields) = value, fields.count == 3 else { return .null }
        let style = (fields[2].dictionary ?? [:]).sorted { $0.key < $1.key }.map {
            ($0.key, styleValue($0.value).json)
        }
        return .object([
            ("id", .string(fields[0].string ?? "")), ("title", .string(fields[1].string ?? "")),
            ("style", .object(style)),
        ])
    }

    /// A signal's `a{sv}` as a JSON object, keys sorted: strings, numbers and flags as they are, NaN as null.
    public static func json(_ dictionary: [String: DBusValue]) -> JSONValue {
        .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, json($0.key, $0.value)) })
    }

    // MARK: Who may call

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

    /// Checks that a method's caller is `owner`, root, or (when given) a member of `group`; AccessDenied naming
    /// who may, otherwise. The recorder and the mirror apply the same rule.
    public static func checkCaller(
        _ call: ExportedInterface.Call, on connection: DBusConnection, owner: UInt32, group: String?, what: String
    ) async throws(DBusError) {
        let caller = try await connection.unixUser(of: call.sender)
        guard caller == owner || caller == 0 || group.map({ isMember(caller, of: $0) }) == true else {
            let who = group.map { " and members of the group \($0)" } ?? ""
            throw DBusError(
                name: DBusError.accessDeniedName,
                message: "only the user who runs the \(what) (uid \(owner))\(who) may control it")
        }
    }
}
