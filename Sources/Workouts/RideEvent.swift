import Formats
import StructuredWorkouts

/// The one stream every source becomes (Docs/architecture.md, how a ride flows): a live ride, a btsnoop capture and a cyclelog journal all
/// turn into `RideEvent`s in arrival order, and nothing downstream knows which source fed it.
public struct RideEvent: Equatable, Sendable {
    /// Arrival time in microseconds since the Unix epoch: the capture's clock on replay, the host clock live.
    public var timeMicroseconds: Int64
    public var kind: Kind

    public enum Kind: Equatable, Sendable {
        /// A Handle Value Notification or Indication: the characteristic's 16-bit UUID and the value bytes.
        case notification(sensor: String, characteristic: UInt16, value: [UInt8])
        /// A value read on request (features, sensor location, battery); never counted as a measurement.
        case read(sensor: String, characteristic: UInt16, value: [UInt8])
        /// A value cyclelog wrote to a sensor (a request to a trainer's control point): what was asked, beside
        /// the answers the sensor indicated, so that a replay shows both.
        case write(sensor: String, characteristic: UInt16, value: [UInt8])
        case connected(sensor: String, name: String?)
        case disconnected(sensor: String)
        /// What passed between the sensor hub and an app riding on it (`record --bridge`): not part of the ride's
        /// readings, kept so that what an app asked and was told replays exactly.
        case hub(HubExchange)
        /// The wheel circumference in force for a sensor from this point on.
        case wheelCircumference(sensor: String, millimetres: Int)
        /// Boxed, as `setting` is: a start's plan takes 64 octets, which every event of a 4-hour ride (100 000 of
        /// them, nearly all values) would otherwise carry.
        indirect case control(WorkoutControl)
        /// A setting that changes how the ride is built (a replay option, a recorder's option): kept in the
        /// journal so that the journal alone reproduces the ride.
        indirect case setting(RideSetting)
    }

    public init(timeMicroseconds: Int64, _ kind: Kind) {
        self.timeMicroseconds = timeMicroseconds
        self.kind = kind
    }

    /// The sensor this event concerns, if any.
    public var sensor: String? {
        switch kind {
        case .notification(let sensor, _, _), .read(let sensor, _, _), .write(let sensor, _, _),
            .connected(let sensor, _),
            .disconnected(let sensor), .wheelCircumference(let sensor, _):
            sensor
        case .control, .setting, .hub: nil
        }
    }
}

/// One write between the sensor hub and the apps on it, in either direction.
public enum HubExchange: Equatable, Sendable {
    /// An app (its address) wrote `value` to the hub's characteristic (a request to its Fitness Machine control
    /// point).
    case written(app: String, characteristic: UInt16, value: [UInt8])
    /// The hub indicated `value` on its characteristic to the apps subscribed (the control point's answer, a
    /// status).
    case sent(characteristic: UInt16, value: [UInt8])
    /// Who holds the trainer from then on: an app (its address, and the name it gave when BlueZ read one), or the
    /// rider again (`app` nil). What a ride's time under an app's control is measured from.
    case holder(app: String?, name: String?)
}

/// How a ride is built, beyond its sensors' own data: what `--wheel-circumference` and `--auto-pause` say.
public enum RideSetting: Equatable, Sendable {
    /// The wheel circumference for every sensor that has no `wheelCircumference` of its own.
    case defaultWheelCircumference(millimetres: Int)
    case autoPause(AutoPause)
    /// What the rider asked of the smart trainer from then on.
    case trainerTarget(TrainerTarget)
    /// The structured workout the ride follows, with the FTP its shares of FTP are taken of.
    case workout(PlannedWorkout)
    /// What the rider did to the workout's player (skip, back, extend, intensity).
    case player(PlayerControl)
}

/// What a rider (or a script over D-Bus) asks of the workout; the same words as SiriKit's workout intents.
public enum WorkoutControl: Equatable, Sendable {
    case start(WorkoutPlan)
    case pause
    case resume
    case lap
    /// A labelled point in time that does not split the workout.
    case marker(String)
    /// Something the rider drank or ate, logged during the ride (from a second screen, the dashboard, a script).
    case intake(Intake)
    case end
    case cancel
    /// Reverses an earlier rider action of this ride, named by its journal line's time and verb: the ride is built
    /// as if that action had never been taken (`UndoableBuilder`), while the journal keeps both lines.
    case undo(UndoneAction)

    public var name: String {
        switch self {
        case .start: "start"
        case .pause: "pause"
        case .resume: "resume"
        case .lap: "lap"
        case .marker: "marker"
        case .intake: "intake"
        case .end: "end"
        case .cancel: "cancel"
        case .undo: "undo"
        }
    }
}

/// The action an `undo` reverses: the time of its journal line (microseconds since the Unix epoch) and the line's
/// verb (`lap`, `marker`, `intake`, `pause`, `resume`, `end`, `trainer`, `player`). Within a ride no two rider
/// actions share a time, so the pair names one line.
public struct UndoneAction: Hashable, Sendable {
    public var timeMicroseconds: Int64
    public var verb: String

    public init(timeMicroseconds: Int64, verb: String) {
        self.timeMicroseconds = timeMicroseconds
        self.verb = verb
    }
}

extension RideEvent {
    /// The verbs of the events a rider can undo, as the journal writes them.
    public static let undoableVerbs: Set<String> = [
        "lap", "marker", "intake", "pause", "resume", "end", "trainer", "player",
    ]

    /// How an `undo` names this event, when it is one a rider can take back: a control of the ride (not a start,
    /// which is undone by cancelling, nor a cancel), the trainer's target, the workout player's controls.
    public var undoable: UndoneAction? {
        let verb: String
        switch kind {
        case .control(.start), .control(.cancel), .control(.undo): return nil
        case .control(let control): verb = control.name
        case .setting(.trainerTarget): verb = "trainer"
        case .setting(.player): verb = "player"
        default: return nil
        }
        return UndoneAction(timeMicroseconds: timeMicroseconds, verb: verb)
    }
}

/// How a workout was started: its name, goal, place, identity and whether it is a fitness test.
public struct WorkoutPlan: Equatable, Sendable {
    /// The suggested workout it was started from (`WorkoutPreset.id`), when it was.
    public var preset: String?
    public var name: String?
    public var goal: WorkoutGoal?
    public var location: WorkoutLocation?
    /// A declared FTP test: its result sets the FTP by the test's protocol.
    public var fitnessTest: FitnessTest?
    /// Set by a live recorder so that replaying its journal gives the same workout identity.
    public var syncIdentifier: String?

    public init(
        name: String? = nil, goal: WorkoutGoal? = nil, location: WorkoutLocation? = nil,
        syncIdentifier: String? = nil, fitnessTest: FitnessTest? = nil
    ) {
        self.fitnessTest = fitnessTest
        self.name = name
        self.goal = goal
        self.location = location
        self.syncIdentifier = syncIdentifier
    }

    /// How a ride's name is written: `text` without its surrounding white space, 1 to 200 characters; nil otherwise.
    public static func name(_ text: String) -> String? {
        let trimmed = text.withoutSurroundingWhitespace
        return trimmed.isEmpty || trimmed.count > 200 ? nil : trimmed
    }

    /// What `name(_:)` asks of a name, for a message that refuses one.
    public static let nameRule = "a name takes 1 to 200 characters"
}

public enum WorkoutLocation: String, Equatable, Sendable {
    case indoor
    case outdoor
}

/// A goal of time, distance or energy; a workout without one is open-ended.
public enum WorkoutGoal: Equatable, Sendable, CustomStringConvertible {
    case timeSeconds(Double)
    case distanceMeters(Double)
    case energyJoules(Double)

    /// Parses `45m`, `1h30m`, `90s` (time), `30km`, `20mi` (distance), `600kJ`, `800kcal` (energy). A bare `m`
    /// means minutes, as on a bike computer's goal screen, so distances take `km` or `mi`.
    public init?(_ text: String) {
        let lower = text.lowercased()
        func number(_ suffix: String) -> Double? {
            guard lower.hasSuffix(suffix) else { return nil }
            return Double(lower.dropLast(suffix.count))
        }
        if let value = number("km") {
            self = .distanceMeters(value * 1000)
        } else if let value = number("mi") {
            self = .distanceMeters(value * 1609.344)
        } else if let value = number("kj") {
            self = .energyJoules(value * 1000)
        } else if let value = number("kcal") {
            // Mechanical work at the usual 4.184 kJ per kcal, as bike computers label kJ ≈ kcal otherwise.
            self = .energyJoules(value * 4184)
        } else if let seconds = Self.durationSeconds(lower) {
            self = .timeSeconds(seconds)
        } else {
            return nil
        }
        // Goals a ride can have, so that every goal accepted is stored and read back: from 1 s, 1 m or 1 kJ to a
        // week, 10 000 km or 100 MJ (a larger or smaller number is a typing slip, `inf` or `nan` no number).
        switch self {
        case .timeSeconds(let v): if !(1...(7 * 86_400)).contains(v) { return nil }
        case .distanceMeters(let v): if !(1...10_000_000).contains(v) { return nil }
        case .energyJoules(let v): if !(1000...100_000_000).contains(v) { return nil }
        }
    }

    /// `1h30m`, `45m`, `45min`, `90s`, `2h`.
    private static func durationSeconds(_ text: String) -> Double? {
        var total = 0.0
        var digits = ""
        var sawUnit = false
        var rest = Substring(text)
        while let character = rest.first {
            if character.isNumber || character == "." {
                digits.append(character)
                rest = rest.dropFirst()
                continue
            }
            guard let value = Double(digits) else { return nil }
            if rest.hasPrefix("min") {
                total += value * 60
                rest = rest.dropFirst(3)
            } else if character == "h" {
                total += value * 3600
                rest = rest.dropFirst()
            } else if character == "m" {
                total += value * 60
                rest = rest.dropFirst()
            } else if character == "s" {
                total += value
                rest = rest.dropFirst()
            } else {
                return nil
            }
            digits = ""
            sawUnit = true
        }
        return sawUnit && digits.isEmpty ? total : nil
    }

    /// The canonical spelling, which `init?(_:)` reads back to the same value.
    public var description: String {
        switch self {
        case .timeSeconds(let seconds): "\(compact(seconds))s"
        case .distanceMeters(let meters): "\(compact(meters / 1000))km"
        case .energyJoules(let joules): "\(compact(joules / 1000))kJ"
        }
    }

    /// As a rider reads it: "1 h", "1 h 30 min", "45 min", "90 s", "30 km", "600 kJ".
    public var shown: String {
        switch self {
        case .timeSeconds(let seconds):
            let total = Int(seconds.rounded())
            let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
            let parts = [(hours, "h"), (minutes, "min"), (rest, "s")].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            return parts.isEmpty ? "0 s" : parts.joined(separator: " ")
        case .distanceMeters(let meters): return "\(compact(meters / 1000)) km"
        case .energyJoules(let joules): return "\(compact(joules / 1000)) kJ"
        }
    }

    /// How far a ride with these totals got towards the goal (1 = reached): moving time, distance or work.
    public func progress(movingSeconds: Double, distanceMeters: Double, workJoules: Double?) -> Double? {
        switch self {
        case .timeSeconds(let seconds): movingSeconds / seconds
        case .distanceMeters(let meters): distanceMeters / meters
        case .energyJoules(let joules): workJoules.map { $0 / joules }
        }
    }

    public var kind: String {
        switch self {
        case .timeSeconds: "time"
        case .distanceMeters: "distance"
        case .energyJoules: "energy"
        }
    }

    public var target: Double {
        switch self {
        case .timeSeconds(let v), .distanceMeters(let v), .energyJoules(let v): v
        }
    }
}

/// `45.0` → `45`, `2.5` → `2.5`.
func compact(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}
