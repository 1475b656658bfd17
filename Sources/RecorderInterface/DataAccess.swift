import DBus
import Workouts

/// Which data type each part of the recorder's contract carries (Docs/reference/data-types.md): what a screen
/// granted some types is shown of the properties, the `Live` readings and the `Event`s, and which type a command
/// needs. What has no type here (the ride's state, its times, its lap, its sensors, the trainer's and the
/// workout's targets) is seen by every paired device.
public enum DataAccess {
    /// The type of a `RecorderStatus` property's value (by its D-Bus name); nil for what every device sees.
    public static func type(ofProperty name: String) -> DataType? {
        switch name {
        case "PowerWatts": .power
        case "CadenceRPM": .cadence
        case "SpeedMetersPerSecond", "DistanceMeters": .speed
        case "HeartRateBPM": .hr
        case "WorkJoules": .energy
        case "WaterMillilitres": .intake
        default: nil
        }
    }

    /// A `Live` reading with only the readings of `types` (and `shown` cut to them); nil when none is left, so that
    /// a device is not even told when a sensor of a type it was not given spoke.
    public static func reading(_ reading: [String: DBusValue], for types: Set<DataType>) -> [String: DBusValue]? {
        var kept = reading
        var any = false
        for channel in Channel.allCases where reading[channel.jsonKey] != nil {
            if types.contains(DataType(channel)) { any = true } else { kept[channel.jsonKey] = nil }
        }
        guard any else { return nil }
        if let shown = reading["shown"]?.unwrapped.stringArray {
            let allowed = Set(Channel.allCases.filter { types.contains(DataType($0)) }.map(\.jsonKey))
            kept["shown"] = .array(elementSignature: "s", shown.filter(allowed.contains).map(DBusValue.string))
        }
        return kept
    }

    /// The type an `Event` belongs to: an intake's (and an intake's undo) is intake; nil for the ride's controls,
    /// which every device sees.
    public static func type(ofEvent event: [String: DBusValue]) -> DataType? {
        let kind = event["kind"]?.unwrapped.string
        let undone = event["action"]?.unwrapped.string
        return kind == "intake" || (kind == "undo" && undone == "intake") ? .intake : nil
    }
}

extension RecorderCommand {
    /// The type a device must be granted to send this command: intake for an intake, trainer for the trainer's
    /// mode and targets, ride for the rest (a start, the ride's controls, a marker, the workout's steps).
    public var dataType: DataType {
        switch self {
        case .intake: .intake
        case .steer: .trainer
        case .start, .control, .marker, .player, .undo, .endNow: .ride
        }
    }
}
