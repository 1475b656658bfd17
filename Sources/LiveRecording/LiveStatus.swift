import RecorderInterface
import TrainerControl
import Workouts

/// What a live ride looks like right now: `published`, the status as the recorder's contract has it (its D-Bus
/// properties, `status --json`, the mirror's snapshot), made once by the recorder's core from its parts; and
/// `screen`, what only the dashboard beside the rider shows. The published fields read as the status's own
/// (`status.state`, `status.stepIndex`).
@dynamicMemberLookup
public struct LiveStatus: Sendable, Equatable {
    /// A battery at or below this is low: warned about when a ride starts or the sensor connects, marked "(low)"
    /// on the dashboard, and a warning in `doctor`.
    public static let lowBatteryPercent = 20

    /// A sensor's link as the status shows it.
    public typealias SensorState = RecorderInterface.SensorState

    public var published: RecorderStatus
    public var screen = Screen()
    /// The sensor hub is wanted now: the ride being recorded or armed asked for it (`hub=true`) on a recorder that
    /// runs the hub for such rides (`LiveRecorder.HubChoice.onStart`).
    public var hubWanted = false

    public init(published: RecorderStatus) { self.published = published }

    public subscript<Value>(dynamicMember field: KeyPath<RecorderStatus, Value>) -> Value { published[keyPath: field] }

    /// The recorder's state (the core always says it; the contract's is optional for a status not yet read).
    public var state: RecorderState { published.state ?? .waiting }

    /// What the dashboard shows beyond the contract, or finer than the contract carries it.
    public struct Screen: Sendable, Equatable {
        /// The latest problem worth showing (a refused connection, a lost bluetoothd).
        public var message: String?
        /// The trainer's own ERG target and grade: the published ones are a structured workout's step's while
        /// one is ridden, whatever the rider asked of the trainer since.
        public var trainerTargetWatts: Int?
        public var trainerGradePercent: Double?
        /// What the trainer is told in ERG now (the ramp's, the cadence safety's), before the power match.
        public var trainerNowWatts: Int?
        /// The power match's offset, unrounded (published to 0.1 W).
        public var powerMatchOffsetWatts: Double?
        /// The step's own grade (the published grade is the trainer's when the step has none), its seconds left
        /// unrounded (published whole), and its cadence range.
        public var stepGradePercent: Double?
        public var stepSecondsLeft: Double?
        public var cadenceTarget: ClosedRange<Int>?
        /// The whole workout, for a small chart with the position (published as `workoutProfile`'s text).
        public var profile: [ProfileSegment] = []

        public init() {}
    }

    /// One step of a workout's profile: how long it is, and the watts at its start and end (nil: no target).
    public struct ProfileSegment: Sendable, Equatable {
        public var seconds: Int
        public var startWatts: Int?
        public var endWatts: Int?
    }
}

extension RecorderState {
    /// A ride's state in the status's words.
    init(_ state: Session.State) {
        switch state {
        case .notStarted: self = .notStarted
        case .running: self = .running
        case .paused: self = .paused
        case .ended: self = .ended
        case .cancelled: self = .cancelled
        }
    }
}
