import DBus
import Formats
import StructuredWorkouts
import TrainerControl
import Workouts

/// What a client asks of the recorder, as one type: the CLI's verbs, the dashboard's keys and the recorder's
/// D-Bus object (whose `Control` method the mirror's `POST /api/v1/control` reaches) all speak it. `name` and
/// `arguments` are its one encoding, `Control`'s `command` and `args` (Docs/reference/dbus.md);
/// `init(name:arguments:)` is its one decoding, which refuses with InvalidArgs naming the command or the argument
/// that is missing.
///
/// Numbers are carried as they were asked, and held to their bounds where they are carried out (`Steer.ask()`,
/// `Player.control(intensityPercent:)`): a target of 5000 W is a command, which the recorder refuses in words,
/// whoever sent it.
public enum RecorderCommand: Equatable, Sendable {
    /// A ride with a style (`name`, `goal`, `location`, `preset`, `when`, `workout`, `control`, …), read against
    /// the presets by the recorder (`StartRequest(style:presets:)`).
    case start(style: [String: StartRequest.Value])
    /// Pause, resume, lap, end or cancel.
    case control(WorkoutControl)
    /// A labelled point in the ride (1–200 characters).
    case marker(String)
    /// Water or carbohydrate taken.
    case intake(Intake)
    /// The smart trainer: a mode or a target.
    case steer(Steer)
    /// The structured workout's player.
    case player(Player)
    /// Takes back an action of the ride within its 30 s: `action` (the status's `UndoId`, so that two screens
    /// offering the same action undo it once), or the latest (nil).
    case undo(action: Int64?)
    /// `end` with `now`: the ride is saved at once, without the 30 s in which an End can be undone.
    case endNow

    /// What a trainer command asks, as asked.
    public enum Steer: Equatable, Sendable {
        /// `target` with `watts`: ERG at this power (0–3000 W).
        case target(watts: Double)
        /// `target` with `change`: ERG at the current target plus this (±500 W).
        case targetChange(watts: Double)
        /// `grade` with `percent`: simulation at this grade (±40 %).
        case grade(percent: Double)
        /// `resistance` with `percent`: a share of the trainer's range (0–100 %).
        case resistance(percent: Double)
        /// `trainer` with `mode`: erg, sim, resistance or free.
        case mode(String)
    }

    /// What a player command asks, as asked.
    public enum Player: Equatable, Sendable {
        case skip
        case back
        /// `extend` with `seconds` (1–3600).
        case extend(seconds: Double)
        /// `intensity` with `percent` (50–150).
        case intensity(percent: Double)
        /// `intensity` with `change` (±100, from where the intensity stands, held within 50–150).
        case intensityChange(percent: Double)
    }

    /// Every command name `Control` takes, in the documented order: start, the ride's controls (each a method of
    /// its own as well, `RecorderControl.methods`), marker, intake, the trainer's, the player's.
    public static let names =
        ["start"] + RecorderControl.methods.map(\.control.name) + ["marker", "intake"]
        + ["target", "grade", "resistance", "trainer"] + ["skip", "back", "extend", "intensity"] + ["undo"]

    /// `Control`'s `command`.
    public var name: String {
        switch self {
        case .start: "start"
        case .control(let control): control.name
        case .marker: "marker"
        case .intake: "intake"
        case .steer(.target), .steer(.targetChange): "target"
        case .steer(.grade): "grade"
        case .steer(.resistance): "resistance"
        case .steer(.mode): "trainer"
        case .player(.skip): "skip"
        case .player(.back): "back"
        case .player(.extend): "extend"
        case .player(.intensity), .player(.intensityChange): "intensity"
        case .undo: "undo"
        case .endNow: "end"
        }
    }

    /// `Control`'s `args`.
    public var arguments: [String: DBusValue] {
        switch self {
        case .start(let style): style.mapValues(RecorderControl.dbusValue)
        case .control, .player(.skip), .player(.back), .undo(nil): [:]
        case .undo(let action?): ["action": .int64(action)]
        case .endNow: ["now": .boolean(true)]
        case .marker(let text): ["text": .string(text)]
        case .intake(let intake):
            [
                "kind": .string(intake.kind.rawValue), "amount": .double(intake.amount),
                "unit": .string(intake.kind.unit),
            ]
        case .steer(.target(let watts)): ["watts": .double(watts)]
        case .steer(.targetChange(let watts)): ["change": .double(watts)]
        case .steer(.grade(let percent)), .steer(.resistance(let percent)): ["percent": .double(percent)]
        case .steer(.mode(let mode)): ["mode": .string(mode)]
        case .player(.extend(let seconds)): ["seconds": .double(seconds)]
        case .player(.intensity(let percent)): ["percent": .double(percent)]
        case .player(.intensityChange(let change)): ["change": .double(change)]
        }
    }

    /// The interface's own method for this command, when it has one, with its arguments in order: `Start`
    /// (which answers the new ride's id), `Pause`…`Cancel`, `Marker`, `Intake`. The rest only `Control` takes.
    public var method: (name: String, arguments: [DBusValue])? {
        switch self {
        case .start(let style):
            let pairs = style.sorted { $0.key < $1.key }.map { ($0.key, RecorderControl.dbusValue($0.value)) }
            return ("Start", [.properties(pairs)])
        case .control(let control):
            return RecorderControl.methods.first { $0.control == control }.map { ($0.name, []) }
        case .marker(let text): return ("Marker", [.string(text)])
        case .intake(let intake):
            return ("Intake", [.string(intake.kind.rawValue), .double(intake.amount), .string(intake.kind.unit)])
        case .undo(let action): return ("Undo", [.int64(action ?? 0)])
        case .steer, .player, .endNow: return nil
        }
    }

    /// Reads `Control`'s `command` and `args`; InvalidArgs naming an unknown command, a missing argument, or (for
    /// a marker and an intake, which have no bounds elsewhere) the one that is wrong.
    public init(name: String, arguments: [String: DBusValue]) throws(DBusError) {
        /// A number argument as asked: nil when absent, NaN when it is not a number (refused with its bounds).
        func number(_ key: String) -> Double? {
            guard let value = arguments[key]?.unwrapped else { return nil }
            if case .double(let number) = value { return number }
            return value.integer.map(Double.init) ?? .nan
        }
        func missing(_ what: String) -> DBusError {
            DBusError(name: DBusError.invalidArgumentsName, message: "\(name) takes \(what)")
        }
        switch name {
        case "start":
            self = .start(style: arguments.mapValues(RecorderControl.styleValue))
        case "marker":
            let text = arguments["text"]?.string ?? ""
            guard (1...200).contains(text.count) else {
                throw DBusError(name: DBusError.invalidArgumentsName, message: "text takes 1 to 200 characters")
            }
            self = .marker(text)
        case "intake":
            self = .intake(try Self.intake(arguments))
        case "target":
            if let watts = number("watts") {
                self = .steer(.target(watts: watts))
            } else if let change = number("change") {
                self = .steer(.targetChange(watts: change))
            } else {
                let watts = TrainerTarget.ergWatts
                throw missing("watts (\(watts.lowerBound)–\(watts.upperBound)) or change (±500)")
            }
        case "grade":
            guard let percent = number("percent") else {
                throw missing("percent (±\(Int(TrainerTarget.gradePercent.upperBound)))")
            }
            self = .steer(.grade(percent: percent))
        case "resistance":
            guard let percent = number("percent") else {
                let range = TrainerTarget.resistancePercent
                throw missing("percent (\(range.lowerBound)–\(range.upperBound))")
            }
            self = .steer(.resistance(percent: percent))
        case "trainer":
            self = .steer(.mode(arguments["mode"]?.string ?? ""))
        case "undo":
            switch arguments["action"]?.unwrapped {
            case nil: self = .undo(action: nil)
            case let value?:
                // An integer of any width, or a whole double (JSON's numbers, passed on by the mirror).
                let whole: Int64? =
                    if case .double(let number) = value, number == number.rounded(), abs(number) < 1e15 {
                        Int64(number)
                    } else {
                        value.integer
                    }
                guard let action = whole, action > 0 else {
                    throw DBusError(
                        name: DBusError.invalidArgumentsName, message: "action takes the number of an action (UndoId)")
                }
                self = .undo(action: action)
            }
        case "end" where arguments["now"]?.unwrapped == .boolean(true):
            self = .endNow
        case "skip": self = .player(.skip)
        case "back": self = .player(.back)
        case "extend":
            guard let seconds = number("seconds") else { throw missing("seconds (1–3600)") }
            self = .player(.extend(seconds: seconds))
        case "intensity":
            if let percent = number("percent") {
                self = .player(.intensity(percent: percent))
            } else if let change = number("change") {
                self = .player(.intensityChange(percent: change))
            } else {
                throw missing("percent (50–150) or change (±100)")
            }
        default:
            guard let control = RecorderControl.methods.first(where: { $0.control.name == name })?.control else {
                throw DBusError(
                    name: DBusError.invalidArgumentsName,
                    message:
                        "command '\(ShownText.cut(name, to: 40))' is not one of \(Self.names.joined(separator: ", "))")
            }
            self = .control(control)
        }
    }

    /// `Intake`'s arguments (`kind`, `amount`, `unit`), or InvalidArgs naming the one that is wrong.
    static func intake(_ arguments: [String: DBusValue]) throws(DBusError) -> Intake {
        let kinds = Intake.Kind.allCases.map(\.rawValue).joined(separator: " or ")
        let name = arguments["kind"]?.string ?? ""
        guard let kind = Intake.Kind(rawValue: name) else {
            throw DBusError(
                name: DBusError.invalidArgumentsName, message: "kind '\(ShownText.cut(name, to: 40))' is not \(kinds)")
        }
        let unit = arguments["unit"]?.string ?? ""
        let units = kind.units.map(\.name)
        guard units.contains(unit.lowercased()) else {
            throw DBusError(
                name: DBusError.invalidArgumentsName,
                message:
                    "unit '\(ShownText.cut(unit, to: 40))' is not one for \(kind.rawValue): \(units.joined(separator: ", "))"
            )
        }
        guard case .double(let amount)? = arguments["amount"]?.unwrapped,
            let intake = Intake(kind, amount: amount, unit: unit)
        else {
            throw DBusError(
                name: DBusError.invalidArgumentsName, message: "amount: \(kind.rawValue) takes \(Intake.forms(kind))")
        }
        return intake
    }

    /// A number held to `range`, or InvalidArgs naming it and its bounds.
    static func held(_ value: Double, _ key: String, _ range: ClosedRange<Double>, unit: String) throws(DBusError)
        -> Double
    {
        guard value.isFinite, range.contains(value) else {
            throw DBusError(
                name: DBusError.invalidArgumentsName,
                message: "\(key) takes a number from \(Int(range.lowerBound)) to \(Int(range.upperBound)) \(unit)")
        }
        return value
    }
}

extension RecorderCommand.Steer {
    /// The trainer's ask, each number within the journal's bounds (`TrainerTarget`: what is taken here is what a
    /// ride's journal can say); InvalidArgs naming the one that is not.
    public func ask() throws(DBusError) -> TrainerAsk {
        let held = RecorderCommand.held
        switch self {
        case .target(let watts):
            let range = Double(TrainerTarget.ergWatts.lowerBound)...Double(TrainerTarget.ergWatts.upperBound)
            return .power(watts: Int(try held(watts, "watts", range, "W").rounded()))
        case .targetChange(let watts):
            return .powerChange(watts: Int(try held(watts, "change", -500...500, "W").rounded()))
        case .grade(let percent):
            return .grade(percent: try held(percent, "percent", TrainerTarget.gradePercent, "%"))
        case .resistance(let percent):
            let range =
                Double(TrainerTarget.resistancePercent.lowerBound)...Double(TrainerTarget.resistancePercent.upperBound)
            return .resistance(percent: try held(percent, "percent", range, "%"))
        case .mode(let name):
            guard let mode = TrainerMode(rawValue: name) else {
                throw DBusError(
                    name: DBusError.invalidArgumentsName,
                    message: "trainer takes mode erg, sim, resistance or free (not '\(ShownText.cut(name, to: 20))')")
            }
            return .mode(mode)
        }
    }
}

extension RecorderCommand.Player {
    /// The player's control, each number within its bounds (`PlayerControl`), an intensity change taken from
    /// `intensityPercent` and held within 50–150; InvalidArgs naming the number that is not within them.
    public func control(intensityPercent: Int) throws(DBusError) -> PlayerControl {
        func whole(_ value: Double, _ key: String, _ range: ClosedRange<Int>, _ unit: String) throws(DBusError) -> Int {
            Int(
                try RecorderCommand.held(value, key, Double(range.lowerBound)...Double(range.upperBound), unit: unit)
                    .rounded())
        }
        switch self {
        case .skip: return .skip
        case .back: return .back
        case .extend(let seconds):
            return .extend(seconds: try whole(seconds, "seconds", PlayerControl.extendSeconds, "s"))
        case .intensity(let percent):
            return .intensity(percent: try whole(percent, "percent", PlayerControl.intensityPercent, "%"))
        case .intensityChange(let change):
            return .intensity(intensityPercent, changedBy: try whole(change, "change", -100...100, "%"))
        }
    }
}
