import RecorderInterface
import TrainerControl
import Workouts

/// What a live ride looks like right now: for the dashboard, the plain status line and the D-Bus properties.
public struct LiveStatus: Sendable, Equatable {
    /// A battery at or below this is low: warned about when a ride starts or the sensor connects, marked "(low)"
    /// on the dashboard, and a warning in `doctor`.
    public static let lowBatteryPercent = 20

    /// A sensor's link as the status shows it.
    public typealias SensorState = RecorderInterface.SensorState

    public struct Sensor: Sendable, Equatable {
        public var name: String
        public var address: String?
        public var state: SensorState
        public var batteryPercent: Int?
    }

    /// Which controls would be taken now (MPRIS's CanPause and its kin).
    public struct Can: Sendable, Equatable {
        public var start = false, pause = false, resume = false, lap = false, end = false, cancel = false

        public init() {}
    }

    public var workoutId: Int64
    public var state: RecorderState
    /// The ride's plan (name, goal, place, preset): the armed one while armed, empty while waiting.
    public var plan = WorkoutPlan()
    public var can = Can()
    /// Since the current lap began (the ride's start for the first lap).
    public var lapElapsedSeconds = 0.0
    /// Water logged during the ride.
    public var waterMillilitres = 0.0
    /// Where the current ride's controls stand: its workout id in the high 32 bits and how many controls (start
    /// included) it has taken in the low ones; 0 while no ride is recorded. A caller's expectation of one ride
    /// can never match another, even after the recorder restarted (the new ride has a new id).
    public var controlSequence: UInt64 = 0
    public var elapsedSeconds: Double
    public var movingSeconds: Double
    /// Mean of the last 3 completed seconds.
    public var powerWatts: Double?
    public var cadenceRPM: Double?
    public var speedMetersPerSecond: Double?
    public var heartRateBPM: Double?
    public var distanceMeters: Double
    public var workJoules: Double
    /// 1 for the first lap.
    public var lap: Int
    /// 0…1 of the goal, nil for an open workout.
    public var goalProgress: Double?
    public var sensors: [Sensor]
    /// The latest problem worth showing (a refused connection, a lost bluetoothd).
    public var message: String?
    /// The smart trainer's control; nil when no trainer has connected.
    public var trainer: Trainer?
    /// The structured workout being ridden; nil without one.
    public var workout: Workout?
    /// The presets offered: pinned first, then the most recently used.
    public var suggestedWorkouts: [WorkoutPreset] = []

    /// Where the ride is in its structured workout.
    public struct Workout: Sendable, Equatable {
        /// The library's id.
        public var id: String
        public var name: String
        /// From 0; equal to `stepCount` once the workout is complete.
        public var stepIndex: Int
        public var stepCount: Int
        /// Nil for an open or distance step, and once complete.
        public var stepSecondsLeft: Double?
        /// What the step asks now, after the intensity (nil for a free ride or a maximal effort).
        public var targetPowerWatts: Int?
        /// A range step's range.
        public var targetRangeWatts: ClosedRange<Int>?
        /// A step ridden in simulation: the road's grade, in %.
        public var targetGradePercent: Double?
        public var nextTargetPowerWatts: Int?
        public var intensityPercent: Int
        public var cadenceTarget: ClosedRange<Int>?
        public var stepName: String?
        /// The whole workout, for a small chart with the position; and as the D-Bus property's text.
        public var profile: [Segment]
        public var profileText: String

        public struct Segment: Sendable, Equatable {
            public var seconds: Int
            public var startWatts: Int?
            public var endWatts: Int?
        }
    }

    /// Where the control of a smart trainer stands.
    public struct Trainer: Sendable, Equatable {
        public var mode: TrainerMode
        public var state: TrainerState
        /// The rider's ERG target (before the ramp, the cadence safety and the power match); nil outside ERG.
        public var targetPowerWatts: Int?
        /// What the trainer is being told in ERG now, before the power match.
        public var effectivePowerWatts: Int?
        public var gradePercent: Double?
        /// Resistance as a share of the trainer's declared range, in %.
        public var resistanceLevel: Double?
        /// The power match's offset (meter − trainer); nil when it is off or no meter sends.
        public var powerMatchOffsetWatts: Double?
        /// The trainer's last refusal, in words, until it takes a target again.
        public var message: String?

        public init(
            mode: TrainerMode, state: TrainerState, targetPowerWatts: Int? = nil, effectivePowerWatts: Int? = nil,
            gradePercent: Double? = nil, resistanceLevel: Double? = nil, powerMatchOffsetWatts: Double? = nil,
            message: String? = nil
        ) {
            self.mode = mode
            self.state = state
            self.targetPowerWatts = targetPowerWatts
            self.effectivePowerWatts = effectivePowerWatts
            self.gradePercent = gradePercent
            self.resistanceLevel = resistanceLevel
            self.powerMatchOffsetWatts = powerMatchOffsetWatts
            self.message = message
        }
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
