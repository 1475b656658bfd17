import DBus
import Formats
import TrainerControl
import Workouts

/// The recorder's properties as one value: what `org.cyclelog.Recorder1` publishes, typed. The recorder's core makes
/// one from its parts (`LiveStatus.published`) and exports `values`; the CLI and the mirror read one back (`init(values:)`, then
/// `apply` for each `PropertiesChanged`). Each property is declared once, in `properties`: its D-Bus name, its
/// type, and how it is written and read. A measurement not known is nil here and NaN on the bus.
public struct RecorderStatus: Sendable, Equatable {
    /// Nil until read (on the bus: an empty text).
    public var state: RecorderState?
    /// 0 while no ride is recorded.
    public var workoutId: Int64 = 0
    public var elapsedSeconds = 0.0
    public var movingSeconds = 0.0
    /// Mean of the last 3 completed seconds.
    public var powerWatts: Double?
    public var cadenceRPM: Double?
    public var speedMetersPerSecond: Double?
    public var heartRateBPM: Double?
    public var distanceMeters = 0.0
    /// 1 for the first lap.
    public var lap: UInt32 = 0
    /// Empty when not set.
    public var name = ""
    /// `indoor` or `outdoor`; empty when not set.
    public var location = ""
    /// The goal as `cyclelog start --goal` takes it; empty for an open ride.
    public var goal = ""
    /// 0…1 of the goal, nil for an open ride.
    public var goalProgress: Double?
    public var lapElapsedSeconds = 0.0
    public var workJoules = 0.0
    public var waterMillilitres = 0.0
    public var can = Controls()
    /// The ride's workout id in the high 32 bits and how many controls it has taken in the low ones.
    public var controlSequence: UInt64 = 0
    public var sensors: [Sensor] = []
    public var suggestedWorkouts: [SuggestedWorkout] = []
    /// The smart trainer's control; nil (on the bus: empty) while no trainer has connected.
    public var trainerMode: TrainerMode?
    public var trainerState: TrainerState?
    /// The rider's ERG target; nil outside ERG.
    public var targetPowerWatts: Double?
    /// In simulation; nil otherwise.
    public var gradePercent: Double?
    /// In resistance mode, as a share of the trainer's range in %; nil otherwise.
    public var resistanceLevel: Double?
    /// Power match's offset (meter − trainer); nil when off or without a meter.
    public var powerMatchOffsetWatts: Double?
    /// The trainer's last refusal in words; empty when none.
    public var trainerMessage = ""
    /// The app on the sensor hub that holds the trainer ("Zwift (00:AA:02:00:00:06)"); empty while the rider does.
    public var trainerHolder = ""
    /// The apps connected to the sensor hub, each with its transport ("Zwift (00:AA:02:00:00:06) over Bluetooth"),
    /// separated by ", "; empty without the hub or an app.
    public var hubApps = ""
    /// The structured workout being ridden: its library id (`workoutId` names the ride) and name; empty without
    /// one.
    public var workoutPlanId = ""
    public var workoutPlanName = ""
    /// The current step, from 0 (equal to `stepCount` once the workout is complete); -1 without a workout.
    public var stepIndex: Int64 = -1
    public var stepCount: Int64 = 0
    /// Nil for an open or distance step.
    public var stepSecondsLeft: Double?
    public var stepName = ""
    /// A range step's range, after the intensity.
    public var targetRangeLowWatts: Double?
    public var targetRangeHighWatts: Double?
    public var nextTargetPowerWatts: Double?
    /// 100 is the workout as written; 0 without a workout.
    public var intensityPercent: Int64 = 0
    /// The whole workout for a small chart: `SECONDS:START:END` per step (watts, `-` for none), comma-separated.
    public var workoutProfile = ""
    /// The latest action of the ride that can still be undone: its number in the ride (0: none), in words
    /// ("lap 4", "ERG 300 W"), and the whole seconds left to undo it (an ended ride's: until it is saved).
    public var undoId: Int64 = 0
    public var undoAction = ""
    /// The data type a screen must be granted to undo it (`ride`, `intake`, `trainer`).
    public var undoType = ""
    public var undoSecondsLeft: Double?

    /// Which controls would be taken now.
    public struct Controls: Sendable, Equatable {
        public var start = false, pause = false, resume = false, lap = false, end = false, cancel = false
        public init() {}
    }

    /// One of `Sensors`, `(sssi)`.
    public struct Sensor: Sendable, Equatable {
        public var name: String
        /// Empty while the sensor has not been seen.
        public var address: String
        /// Nil for a word this version does not know.
        public var state: SensorState?
        /// -1 on the bus when not known.
        public var batteryPercent: Int?

        public init(name: String, address: String, state: SensorState?, batteryPercent: Int?) {
            self.name = name
            self.address = address
            self.state = state
            self.batteryPercent = batteryPercent
        }
    }

    /// One of `SuggestedWorkouts`, `(ssa{sv})`: a preset's id, title and style (its keys in the preset's order).
    public struct SuggestedWorkout: Sendable, Equatable {
        public var id: String
        public var title: String
        public var style: [StyleEntry]

        public struct StyleEntry: Sendable, Equatable {
            public var key: String
            public var value: StartRequest.Value
        }

        public init(_ preset: WorkoutPreset) {
            id = preset.id
            title = preset.title
            style = preset.request.style.map { StyleEntry(key: $0.key, value: $0.value) }
        }

        init(id: String, title: String, style: [StyleEntry]) {
            self.id = id
            self.title = title
            self.style = style
        }
    }

    public init() {}

    // MARK: The properties

    /// One property: its D-Bus name and type, and how a status writes and reads it.
    public struct Property: Sendable {
        public let name: String
        public let signature: String
        let encode: @Sendable (RecorderStatus) -> DBusValue
        /// Reads `value` into the status; a value of another type is ignored (false).
        let decode: @Sendable (inout RecorderStatus, DBusValue) -> Bool
    }

    /// Every property, in the order the introspection lists them (Docs/reference/dbus.md).
    public static let properties: [Property] = [
        word("State", \.state), integer("WorkoutId", \.workoutId), number("ElapsedSeconds", \.elapsedSeconds),
        number("MovingSeconds", \.movingSeconds), measurement("PowerWatts", \.powerWatts),
        measurement("CadenceRPM", \.cadenceRPM), measurement("SpeedMetersPerSecond", \.speedMetersPerSecond),
        measurement("HeartRateBPM", \.heartRateBPM), number("DistanceMeters", \.distanceMeters),
        field("Lap", "u", \.lap, wrap: DBusValue.uint32) { if case .uint32(let lap) = $0 { lap } else { nil } },
        text("Name", \.name), text("Location", \.location), text("Goal", \.goal),
        measurement("GoalProgress", \.goalProgress), number("LapElapsedSeconds", \.lapElapsedSeconds),
        number("WorkJoules", \.workJoules), number("WaterMillilitres", \.waterMillilitres),
        flag("CanStart", \.can.start), flag("CanPause", \.can.pause), flag("CanResume", \.can.resume),
        flag("CanLap", \.can.lap), flag("CanEnd", \.can.end), flag("CanCancel", \.can.cancel),
        field("ControlSequence", "t", \.controlSequence, wrap: DBusValue.uint64) {
            if case .uint64(let sequence) = $0 { sequence } else { nil }
        },
        Property(
            name: "Sensors", signature: "a(sssi)",
            encode: { status in
                .array(
                    elementSignature: "(sssi)",
                    status.sensors.map {
                        .structure([
                            .string($0.name), .string($0.address), .string($0.state?.rawValue ?? ""),
                            .int32(Int32(clamping: $0.batteryPercent ?? -1)),
                        ])
                    })
            },
            decode: { status, value in
                guard case .array("(sssi)", let items) = value.unwrapped else { return false }
                status.sensors = items.compactMap { item in
                    guard case .structure(let fields) = item, fields.count == 4 else { return nil }
                    let battery = fields[3].integer ?? -1
                    return Sensor(
                        name: fields[0].string ?? "", address: fields[1].string ?? "",
                        state: fields[2].string.flatMap(SensorState.init(rawValue:)),
                        batteryPercent: battery < 0 ? nil : Int(battery))
                }
                return true
            }),
        Property(
            name: "SuggestedWorkouts", signature: "a(ssa{sv})",
            encode: { status in
                .array(
                    elementSignature: "(ssa{sv})",
                    status.suggestedWorkouts.map { workout in
                        .structure([
                            .string(workout.id), .string(workout.title),
                            .properties(workout.style.map { ($0.key, RecorderControl.dbusValue($0.value)) }),
                        ])
                    })
            },
            decode: { status, value in
                guard case .array("(ssa{sv})", let items) = value.unwrapped else { return false }
                status.suggestedWorkouts = items.compactMap { item in
                    guard case .structure(let fields) = item, fields.count == 3 else { return nil }
                    var style: [SuggestedWorkout.StyleEntry] = []
                    if case .array(_, let entries) = fields[2] {
                        for case .dictEntry(let key, let value) in entries {
                            style.append(.init(key: key.string ?? "", value: RecorderControl.styleValue(value)))
                        }
                    }
                    return SuggestedWorkout(id: fields[0].string ?? "", title: fields[1].string ?? "", style: style)
                }
                return true
            }),
        word("TrainerMode", \.trainerMode), word("TrainerState", \.trainerState),
        measurement("TargetPowerWatts", \.targetPowerWatts), measurement("GradePercent", \.gradePercent),
        measurement("ResistanceLevel", \.resistanceLevel),
        measurement("PowerMatchOffsetWatts", \.powerMatchOffsetWatts), text("TrainerMessage", \.trainerMessage),
        text("TrainerHolder", \.trainerHolder), text("HubApps", \.hubApps),
        text("WorkoutPlanId", \.workoutPlanId), text("WorkoutPlanName", \.workoutPlanName),
        integer("StepIndex", \.stepIndex), integer("StepCount", \.stepCount),
        measurement("StepSecondsLeft", \.stepSecondsLeft), text("StepName", \.stepName),
        measurement("TargetRangeLowWatts", \.targetRangeLowWatts),
        measurement("TargetRangeHighWatts", \.targetRangeHighWatts),
        measurement("NextTargetPowerWatts", \.nextTargetPowerWatts), integer("IntensityPercent", \.intensityPercent),
        text("WorkoutProfile", \.workoutProfile), integer("UndoId", \.undoId), text("UndoAction", \.undoAction),
        text("UndoType", \.undoType),
        measurement("UndoSecondsLeft", \.undoSecondsLeft),
    ]

    static let byName = Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0) })

    // MARK: On the bus

    /// Every property's value, as the recorder exports them.
    public var values: [String: DBusValue] {
        Dictionary(uniqueKeysWithValues: Self.properties.map { ($0.name, $0.encode(self)) })
    }

    /// One property's value (nil for a name the interface does not have).
    public func value(_ name: String) -> DBusValue? {
        Self.byName[name]?.encode(self)
    }

    /// A status read from `GetAll`'s answer. Properties missing or of another type keep their defaults.
    public init(values: [String: DBusValue]) {
        apply(values)
    }

    /// Applies `PropertiesChanged`'s changed values; returns the names it took, in the interface's order.
    @discardableResult
    public mutating func apply(_ changed: [String: DBusValue]) -> [String] {
        var taken: [String] = []
        for property in Self.properties {
            if let value = changed[property.name], property.decode(&self, value) { taken.append(property.name) }
        }
        return taken
    }

    // MARK: As JSON

    /// One property as `status --json` writes it: NaN (not known) is null, `Sensors` and `SuggestedWorkouts`
    /// arrays of objects.
    public func json(_ name: String) -> JSONValue {
        RecorderControl.json(name, value(name))
    }

    /// Every property as `status --json` writes them, in the interface's order.
    public var jsonFields: [(String, JSONValue)] {
        Self.properties.map { ($0.name, RecorderControl.json($0.name, $0.encode(self))) }
    }

    // MARK: Declaring a property

    /// A property whose value is one field: `wrap` makes its D-Bus value, `unwrap` reads one back (nil: another
    /// type, left alone).
    private static func field<Value>(
        _ name: String, _ signature: String, _ field: WritableKeyPath<RecorderStatus, Value> & Sendable,
        wrap: @escaping @Sendable (Value) -> DBusValue, unwrap: @escaping @Sendable (DBusValue) -> Value?
    ) -> Property {
        Property(
            name: name, signature: signature, encode: { wrap($0[keyPath: field]) },
            decode: { status, value in
                guard let read = unwrap(value.unwrapped) else { return false }
                status[keyPath: field] = read
                return true
            })
    }

    private static func text(_ name: String, _ path: WritableKeyPath<RecorderStatus, String> & Sendable) -> Property {
        field(name, "s", path, wrap: DBusValue.string) { if case .string(let text) = $0 { text } else { nil } }
    }

    /// A property that is one of an enumeration's words: nil is an empty text, and a word this version does not
    /// know reads as nil.
    private static func word<Word: RawRepresentable & Sendable>(
        _ name: String, _ path: WritableKeyPath<RecorderStatus, Word?> & Sendable
    ) -> Property where Word.RawValue == String {
        field(name, "s", path, wrap: { .string($0?.rawValue ?? "") }) { value -> Word?? in
            guard case .string(let text) = value else { return nil }
            return .some(Word(rawValue: text))
        }
    }

    private static func flag(_ name: String, _ path: WritableKeyPath<RecorderStatus, Bool> & Sendable) -> Property {
        field(name, "b", path, wrap: DBusValue.boolean) { if case .boolean(let flag) = $0 { flag } else { nil } }
    }

    private static func integer(_ name: String, _ path: WritableKeyPath<RecorderStatus, Int64> & Sendable)
        -> Property
    {
        field(name, "x", path, wrap: DBusValue.int64) { if case .int64(let number) = $0 { number } else { nil } }
    }

    private static func number(_ name: String, _ path: WritableKeyPath<RecorderStatus, Double> & Sendable)
        -> Property
    {
        field(name, "d", path, wrap: DBusValue.double) { if case .double(let number) = $0 { number } else { nil } }
    }

    /// A measurement that may not be known: NaN on the bus.
    private static func measurement(
        _ name: String, _ path: WritableKeyPath<RecorderStatus, Double?> & Sendable
    ) -> Property {
        field(name, "d", path, wrap: { .double($0 ?? .nan) }) { value -> Double?? in
            guard case .double(let number) = value else { return nil }
            return .some(number.isNaN ? nil : number)
        }
    }
}
