import DBus
import RecorderInterface
import Workouts

/// What the recorder publishes besides its status (`LiveStatus.published`), in the contract's types: each reading
/// and each applied control as the D-Bus signals carry them.
extension LiveRecorder.LiveReading {
    /// Its `Live` signal's dictionary.
    public var signalValue: DBusValue {
        var pairs: [(String, DBusValue)] = [
            ("seq", .uint64(sequence)), ("arrivalMicros", .int64(arrivalMicroseconds)), ("sensor", .string(sensor)),
        ]
        for reading in readings { pairs.append((reading.channel.jsonKey, .double(reading.value))) }
        let shownKeys = readings.filter { shown.contains($0.channel) }.map { DBusValue.string($0.channel.jsonKey) }
        pairs.append(("shown", .array(elementSignature: "s", shownKeys)))
        return .properties(pairs)
    }
}

extension LiveRecorder.AppliedControl {
    /// Its `Event` signal's dictionary: the control, when, its ride and sequence, and its own fields.
    public var signalValue: DBusValue {
        var pairs: [(String, DBusValue)] = [
            ("kind", .string(control.name)), ("workoutId", .int64(workoutId)),
            ("timeMicros", .int64(timeMicroseconds)), ("controlSequence", .uint64(controlSequence)),
        ]
        switch control {
        case .start(let plan):
            let style: [(String, String?)] = [
                ("name", plan.name), ("goal", plan.goal?.description), ("location", plan.location?.rawValue),
                ("preset", plan.preset), ("test", plan.fitnessTest?.rawValue),
            ]
            for case let (key, value?) in style { pairs.append((key, .string(value))) }
        case .marker(let text): pairs.append(("text", .string(text)))
        case .intake(let intake):
            pairs += [
                ("intake", .string(intake.kind.rawValue)), ("amount", .double(intake.amount)),
                ("unit", .string(intake.kind.unit)),
            ]
        case .undo(let undone):
            pairs += [("action", .string(undone.verb)), ("actionTimeMicros", .int64(undone.timeMicroseconds))]
        default: break
        }
        return .properties(pairs)
    }
}
