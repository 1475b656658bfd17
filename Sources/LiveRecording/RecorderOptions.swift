import StructuredWorkouts
import TrainerControl
import WorkoutStore
import Workouts

extension LiveRecorder {
    public struct Options: Sendable {
        /// Addresses or names; empty uses every cycling sensor found while scanning.
        public var sensors: [String] = []
        /// The adapter's name (`hci1`) or address; nil for the first one BlueZ lists.
        public var adapter: String?
        public var plan = WorkoutPlan()
        public var autoPause: AutoPause?
        /// For sensors without their own; nil leaves the builder's default. Written into the journal as its
        /// `wheel *` line, as `autoPause` is as its `auto-pause` line.
        public var wheelCircumferenceMillimetres: Int?
        /// Per-address wheel circumferences the rider set (remembered sensors).
        public var wheelCircumferences: [String: Int] = [:]
        /// How long to scan for sensors when none are named.
        public var discoverySeconds = 8.0
        public var flushIntervalSeconds = 0.5
        public var policy = ReconnectPolicy()
        /// `record --auto`: wait for pedalling, end after a time without it, wait for the next ride.
        public var auto: AutoRide?
        /// `record --wait`: connect the sensors and wait for a Start (D-Bus, `cyclelog start`); after each ride,
        /// wait for the next Start with the sensors still connected.
        public var waitForStart = false
        /// Started by the bus for a start (D-Bus activation): how long after the launch a start may wait for the
        /// sensors to connect.
        public var activatedGraceSeconds = 0.0
        /// A sensor whose battery is at or below this is warned about when a ride starts or it connects.
        public var lowBatteryPercent = LiveStatus.lowBatteryPercent
        /// Told what the ride does as it happens: `record --capture`'s HCI capture, `record --sync-trigger`'s
        /// file.
        public var observers: [any RideObserver] = []
        /// How a smart trainer is steered from the start (`control=` of a Start's style, `record --control`),
        /// and the rules of its control (timeouts, the cadence safety, ramps, power match).
        public var trainerMode: TrainerMode = .free
        public var trainerTargetWatts = 150
        public var trainerRules = TrainerRules()
        /// A structured workout every ride follows unless its Start names another (`record --workout`).
        public var workout: WorkoutChoice?
        /// How the sensor hub runs beside the recorder, and so whether a Start's `hub=true` is taken.
        public var hub: HubChoice = .none(HubChoice.noHub)

        public init() {}
    }

    /// How the sensor hub runs beside a recorder.
    public enum HubChoice: Sendable, Equatable {
        /// There is none: a Start's `hub=true` is refused with these words.
        case none(String)
        /// For the whole recording (`record --bridge`): a Start's `hub=true` asks for what is there already.
        case always
        /// For each ride whose Start asks for it (`hub=true`), from its start (or arming) until it is saved: what
        /// runs the hub follows `LiveStatus.hubWanted`.
        case onStart

        /// Why a recorder with no hub refuses `hub=true`.
        public static let noHub =
            "this recorder has no sensor hub: it needs a second Bluetooth adapter (or `cyclelog record --bridge`)"
    }

    /// A workout chosen for the next ride: `record --workout`, or a Start's `workout=`.
    public struct WorkoutChoice: Sendable {
        public var id: String
        public var planned: PlannedWorkout
        public var intensityPercent: Int

        public init(id: String, planned: PlannedWorkout, intensityPercent: Int = 100) {
            self.id = id
            self.planned = planned
            self.intensityPercent = intensityPercent
        }
    }

    /// Rides that start and end on their own (`record --auto`), for a box by the trainer that nobody touches.
    public struct AutoRide: Sendable {
        /// A ride ends after this long without power or cadence above zero, whether the sensors are there or
        /// not. Shorter gaps (a dropout, a stop at the lights) are part of the ride.
        public var endAfterSeconds: Double
        /// The notifications from this long before pedalling was noticed open the ride, so its first
        /// revolutions count (a cadence needs two crank events).
        public var lookbackSeconds = 3.0

        public init(endAfterSeconds: Double = 300) { self.endAfterSeconds = endAfterSeconds }
    }
}

extension LiveRecorder.Options {
    /// `record`'s options completed from what the rider did not say: the remembered sensors when none are named
    /// (with the wheel each was given), an automatic pause for a ride that starts and ends on its own (the minutes
    /// after the last pedal stroke are paused, not moving time), the guided test a workout is, and a grace for the
    /// sensors to connect when the bus started the recorder for a start (D-Bus activation: a launcher's action or
    /// `cyclelog start`, which may come before the sensors are connected).
    public mutating func complete(knownSensors known: [KnownSensor], startedByTheBus: Bool) {
        if sensors.isEmpty { sensors = known.map(\.address) }
        for sensor in known { wheelCircumferences[sensor.address] = sensor.wheelCircumferenceMillimetres }
        if auto != nil { autoPause = autoPause ?? AutoPause() }
        if let id = workout?.id, plan.fitnessTest == nil { plan.fitnessTest = StartRequest.fitnessTest(ofWorkout: id) }
        if startedByTheBus { activatedGraceSeconds = Self.activatedGraceSeconds }
    }

    /// How long a recorder the bus started for a start waits for its sensors.
    public static let activatedGraceSeconds = 30.0
}
