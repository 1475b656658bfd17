import CyclingSensors
import StructuredWorkouts

/// Builds a workout from the ride's event stream, in arrival order, exactly the same way for a live ride and a
/// replay: per-sensor decoding and revolution math, held values binned into the 1 Hz series, the session's
/// pauses and laps, and gaps where a sensor was disconnected or silent.
public struct WorkoutBuilder: Sendable {
    public struct Configuration: Sendable {
        /// Used for a sensor until the journal sets its own (2105 mm: a 700×25C tyre).
        public var defaultWheelCircumferenceMillimetres = 2105
        /// A notification's value holds until the next one, at most this long (Docs/reference/workouts.md, "How a workout is built"); longer is a gap.
        public var holdMicroseconds: Int64 = 3_000_000
        /// Automatic pauses when standing still; nil keeps the timer running.
        public var autoPause: AutoPause?

        public init(defaultWheelCircumferenceMillimetres: Int = 2105, autoPause: AutoPause? = nil) {
            self.defaultWheelCircumferenceMillimetres = defaultWheelCircumferenceMillimetres
            self.autoPause = autoPause
        }
    }

    private struct Held {
        var value: Double
        var rank: Int
        var since: Int64
        var integratedUntil: Int64
    }

    /// A sensor's held values by channel: four slots, where a dictionary would hash the channel for every reading.
    private struct HeldValues {
        private var slots = [Held?](repeating: nil, count: Channel.allCases.count)

        subscript(channel: Channel) -> Held? {
            get { slots[channel.rawValue] }
            set { slots[channel.rawValue] = newValue }
        }

        /// The held values in channel order.
        var all: [(channel: Channel, held: Held)] {
            Channel.allCases.compactMap { channel in slots[channel.rawValue].map { (channel, $0) } }
        }

        mutating func removeAll() {
            for index in slots.indices { slots[index] = nil }
        }
    }

    private struct SensorState {
        var info: WorkoutSensor
        var decoder: SensorDecoder
        var connected = true
        var lastNotification: Int64?
        var held = HeldValues()
        var disconnectedSince: Int64?
        /// A `wheelCircumference` event named this sensor: the default no longer applies to it.
        var hasOwnWheel = false
    }

    /// As given, then as the ride's `setting` events change it.
    public private(set) var configuration: Configuration
    public private(set) var session = Session()
    private var sensors: [SensorState] = []
    private var sensorIndexByAddress: [String: Int] = [:]
    private var bins: SecondBins?
    private var completed: [SecondSample] = []
    private var handedOut = 0
    private var lastTime: Int64 = .min
    /// How far a clock fault's later events are moved back (see `add`).
    private var clockShiftMicroseconds: Int64 = 0
    private var dropouts: [Dropout] = []
    private var trainerTargets: [(timeMicroseconds: Int64, target: TrainerTarget)] = []
    private var trainerHolders: [TrainerHolding] = []
    private var plannedWorkout: PlannedWorkout?
    private var playerControls: [(timeMicroseconds: Int64, control: PlayerControl)] = []
    public private(set) var problems: [BuildProblem] = []
    /// Notifications decoded (including those that gave no reading); malformed ones are in `problems`.
    public private(set) var notificationCount = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Feeds one event. Events must come in arrival order; a late one is treated as arriving now, and a silence
    /// longer than `RideTimeline.longestGapMicroseconds` is a clock fault: the events after it are joined on, so
    /// that no clock can make the builder fill in days of empty seconds. (Files go through `RideTimeline` first,
    /// which also judges misdated single events; this guard is for a live clock.)
    public mutating func add(_ event: RideEvent) {
        let plausible = RideTimeline.plausibleMicroseconds
        var time = min(max(event.timeMicroseconds, plausible.lowerBound), plausible.upperBound) - clockShiftMicroseconds
        if lastTime != .min && time - lastTime > RideTimeline.longestGapMicroseconds {
            problems.append(
                BuildProblem(
                    timeMicroseconds: lastTime,
                    message:
                        "the clock leapt \(RideTimeline.describe(microseconds: time - lastTime)) forward (a clock "
                        + "fault, not a pause): what follows is joined on"))
            clockShiftMicroseconds += time - lastTime
            time = lastTime
        }
        time = max(time, lastTime)
        advance(to: time)
        lastTime = time
        switch event.kind {
        case .notification(let address, let characteristic, let value):
            notificationCount += 1
            if session.state == .notStarted && Characteristic(rawValue: characteristic)?.isMeasurement == true {
                // A capture has no start button: the ride starts with the first measurement.
                start(WorkoutPlan(), at: time)
            }
            notify(sensorIndex(address, at: time), characteristic, value, at: time)
        case .read(let address, let characteristic, let value):
            let index = sensorIndex(address, at: time)
            sensors[index].info.reads[characteristic] = value
        case .hub(.holder(let app, let name)):
            trainerHolders.append(TrainerHolding(timeMicroseconds: time, app: app, name: name))
        case .write, .hub:
            // What was asked of a trainer changes none of the ride's readings (its answers are notifications), nor
            // does what passed between the hub and an app (what the app asked reaches the trainer as a write).
            break
        case .connected(let address, let name):
            let index = sensorIndex(address, at: time)
            if let name { sensors[index].info.name = name }
            if let since = sensors[index].disconnectedSince {
                dropouts.append(Dropout(sensorIndex: index, reason: .disconnected, start: since, end: time))
            }
            sensors[index].disconnectedSince = nil
            sensors[index].connected = true
            sensors[index].lastNotification = nil
            sensors[index].decoder.connectionChanged()
        case .disconnected(let address):
            let index = sensorIndex(address, at: time)
            release(index, at: time)
            if sensors[index].connected { sensors[index].disconnectedSince = time }
            sensors[index].connected = false
            sensors[index].decoder.connectionChanged()
        case .wheelCircumference(let address, let millimetres):
            let index = sensorIndex(address, at: time)
            sensors[index].hasOwnWheel = true
            setWheel(index, millimetres)
        case .setting(.defaultWheelCircumference(let millimetres)):
            configuration.defaultWheelCircumferenceMillimetres = millimetres
            for index in sensors.indices where !sensors[index].hasOwnWheel { setWheel(index, millimetres) }
        case .setting(.autoPause(let autoPause)):
            configuration.autoPause = autoPause
        case .setting(.trainerTarget(let target)):
            trainerTargets.append((time, target))
        case .setting(.workout(let planned)):
            // One workout a ride: a later line is a problem, kept in the journal and ignored.
            if plannedWorkout == nil {
                plannedWorkout = planned
            } else {
                problems.append(BuildProblem(timeMicroseconds: time, message: "a second workout line is ignored"))
            }
        case .setting(.player(let control)):
            playerControls.append((time, control))
        case .control(.undo):
            // `UndoableBuilder` takes undos; a builder alone has nothing to go back to.
            break
        case .control(let control):
            if case .start(let plan) = control, session.state == .notStarted {
                start(plan, at: time)
            } else if let refusal = session.apply(control, at: time) {
                problems.append(BuildProblem(timeMicroseconds: time, message: refusal))
            }
        }
    }

    /// The 1 Hz samples completed since the last call (for writing a live ride as it happens). Their
    /// `runningFraction` reflects manual pauses only; auto-pause is decided when the workout is finished.
    public mutating func takeCompletedSamples() -> ArraySlice<SecondSample> {
        defer { handedOut = completed.count }
        return completed[handedOut...]
    }

    /// How many 1 Hz samples are complete.
    public var completedCount: Int { completed.count }

    /// The completed samples from `second` on, as they stand (after an undo made some again).
    public func samples(from second: Int) -> ArraySlice<SecondSample> {
        completed[min(max(0, second), completed.count)...]
    }

    /// Every completed sample counts as handed out: a caller took them another way (`samples(from:)`).
    public mutating func markHandedOut() { handedOut = completed.count }

    /// A problem found outside the builder's own events (an undo that names no action).
    mutating func report(_ problem: BuildProblem) { problems.append(problem) }

    /// Ends the stream: the workout as it stands. An unfinished session ends at the last event.
    public mutating func finish() -> Workout? {
        guard let origin = session.startMicroseconds else { return nil }
        let end = max(session.endMicroseconds ?? lastTime, origin)
        if session.state == .running || session.state == .paused {
            // The capture ended with the ride still going: it ends there.
            session.apply(.end, at: end)
        }
        for index in sensors.indices {
            release(index, at: end)
            if let since = sensors[index].disconnectedSince {
                dropouts.append(Dropout(sensorIndex: index, reason: .disconnected, start: since, end: end))
            } else if let last = sensors[index].lastNotification, end - last > configuration.holdMicroseconds {
                dropouts.append(
                    Dropout(sensorIndex: index, reason: .stale, start: last + configuration.holdMicroseconds, end: end))
            }
        }
        let binCount = Int((end - origin + 999_999) / 1_000_000)
        finalizeBins(upTo: binCount, end: end)
        var samples = completed
        let rejected = Plausibility.clean(&samples)
        var events = session.events
        if let autoPause = configuration.autoPause {
            events += autoPause.apply(to: &samples, originMicroseconds: origin)
            events.sort { $0.timeMicroseconds < $1.timeMicroseconds }
        }
        let clipped = dropouts.compactMap { $0.clipped(to: origin, end) }.sorted {
            ($0.start, $0.sensorIndex) < ($1.start, $1.sensorIndex)
        }
        var workout = Workout(
            plan: session.plan, state: session.state, startMicroseconds: origin, endMicroseconds: end,
            samples: samples, lapStarts: session.lapStarts, events: events, dropouts: clipped,
            sensors: sensors.map(\.info), rejectedSeconds: rejected)
        workout.problemCount = problems.count
        workout.trainerTargets = trainerTargets
        workout.trainerHolders = trainerHolders
        if let plannedWorkout {
            workout.followPlan(plannedWorkout, controls: playerControls)
        }
        return workout
    }

    // MARK: - Internals

    private mutating func start(_ plan: WorkoutPlan, at time: Int64) {
        session.apply(.start(plan), at: time)
        bins = SecondBins(originMicroseconds: time)
    }

    private mutating func setWheel(_ index: Int, _ millimetres: Int) {
        sensors[index].info.wheelCircumferenceMillimetres = millimetres
        sensors[index].decoder.wheelCircumferenceMeters = Double(millimetres) / 1000
    }

    private mutating func sensorIndex(_ address: String, at time: Int64) -> Int {
        // A ride has a handful of sensors, and each one's events share one address string: comparing is cheaper
        // than hashing 17 characters per event.
        if sensors.count <= 8 {
            for index in sensors.indices where sensors[index].info.address == address { return index }
        } else if let index = sensorIndexByAddress[address] {
            return index
        }
        let index = sensors.count
        let millimetres = configuration.defaultWheelCircumferenceMillimetres
        sensors.append(
            SensorState(
                info: WorkoutSensor(address: address, wheelCircumferenceMillimetres: millimetres),
                decoder: SensorDecoder(wheelCircumferenceMeters: Double(millimetres) / 1000)))
        sensorIndexByAddress[address] = index
        return index
    }

    private mutating func notify(_ index: Int, _ characteristic: UInt16, _ value: [UInt8], at time: Int64) {
        if let last = sensors[index].lastNotification, time - last > configuration.holdMicroseconds {
            // Connected but silent for longer than a value holds: a gap, stored as one.
            dropouts.append(
                Dropout(sensorIndex: index, reason: .stale, start: last + configuration.holdMicroseconds, end: time))
        }
        if !sensors[index].connected, let since = sensors[index].disconnectedSince {
            // Data from a sensor we were told had gone: it is back, whatever the link layer said.
            dropouts.append(Dropout(sensorIndex: index, reason: .disconnected, start: since, end: time))
            sensors[index].disconnectedSince = nil
            sensors[index].connected = true
        }
        sensors[index].lastNotification = time
        if characteristic == Characteristic.batteryLevel.rawValue { sensors[index].info.reads[characteristic] = value }
        let output: SensorDecoder.Output
        do {
            output = try sensors[index].decoder.decode(characteristic: characteristic, value: value, at: time)
        } catch {
            let name =
                Characteristic(rawValue: characteristic)?.name
                ?? "characteristic 0x\(String(characteristic, radix: 16))"
            problems.append(
                BuildProblem(
                    timeMicroseconds: time, message: "\(sensors[index].info.address) \(name): \(error)"))
            return
        }
        for reading in output.readings {
            if var held = sensors[index].held[reading.channel] {
                integrate(&held, index: index, channel: reading.channel, upTo: time)
            }
            sensors[index].held[reading.channel] = Held(
                value: reading.value, rank: reading.rank, since: time, integratedUntil: time)
        }
        if let distance = output.distance, distance.meters > 0 {
            bins?.addDistance(distance.meters, sensorIndex: index, rank: distance.rank, at: time)
        }
    }

    /// Counts a held value into the bins up to `time` (or its hold limit, whichever is first).
    private mutating func integrate(_ held: inout Held, index: Int, channel: Channel, upTo time: Int64) {
        let end = min(time, held.since + configuration.holdMicroseconds)
        guard end > held.integratedUntil else { return }
        bins?.add(
            held.value, channel: channel, sensorIndex: index, rank: held.rank, from: held.integratedUntil, to: end)
        held.integratedUntil = end
    }

    /// Counts every held value of a sensor up to `time` and forgets them (disconnect, end of ride).
    private mutating func release(_ index: Int, at time: Int64) {
        for (channel, var held) in sensors[index].held.all {
            integrate(&held, index: index, channel: channel, upTo: time)
        }
        sensors[index].held.removeAll()
    }

    /// Completes every bin that ends at or before `time`; held values are counted up to `time` first.
    private mutating func advance(to time: Int64) {
        guard let origin = bins?.originMicroseconds, time >= origin + Int64(completed.count + 1) * 1_000_000 else {
            return
        }
        for index in sensors.indices {
            for channel in Channel.allCases {
                guard var held = sensors[index].held[channel] else { continue }
                integrate(&held, index: index, channel: channel, upTo: time)
                sensors[index].held[channel] = held
            }
        }
        finalizeBins(upTo: Int((time - origin) / 1_000_000), end: time)
    }

    private mutating func finalizeBins(upTo count: Int, end: Int64) {
        guard let origin = bins?.originMicroseconds else { return }
        while completed.count < count {
            let index = completed.count
            let binStart = origin + Int64(index) * 1_000_000
            let binEnd = min(binStart + 1_000_000, end)
            let running = binEnd - binStart - session.pausedMicroseconds(from: binStart, to: binEnd)
            guard let sample = bins?.sample(index, runningFraction: Double(max(0, running)) / 1_000_000) else { return }
            completed.append(sample)
        }
        // Every value is counted up to `end` before this is called, and later ones come after it.
        bins?.dropBins(before: completed.count)
    }
}

extension Characteristic {
    /// The characteristics that carry ride data: the first of them starts a capture's workout.
    var isMeasurement: Bool {
        switch self {
        case .cyclingPowerMeasurement, .cscMeasurement, .heartRateMeasurement, .indoorBikeData: true
        default: false
        }
    }
}

/// Something in the stream that could not be used, in words a rider understands.
public struct BuildProblem: Equatable, Sendable {
    public var timeMicroseconds: Int64
    public var message: String
}

/// A sensor as the workout knew it.
public struct WorkoutSensor: Equatable, Sendable {
    public var address: String
    public var name: String?
    public var wheelCircumferenceMillimetres: Int
    /// The last value read of each characteristic (features, sensor location, battery level).
    public var reads: [UInt16: [UInt8]] = [:]

    public init(address: String, name: String? = nil, wheelCircumferenceMillimetres: Int) {
        self.address = address
        self.name = name
        self.wheelCircumferenceMillimetres = wheelCircumferenceMillimetres
    }

    /// Battery Level (0x2A19), when it was read.
    public var batteryPercent: Int? {
        guard let value = reads[Characteristic.batteryLevel.rawValue], let level = try? BatteryLevel(decoding: value)
        else { return nil }
        return Int(level.percent)
    }
}

/// A time when a sensor gave nothing: its link was down, or it was connected but silent.
public struct Dropout: Equatable, Sendable {
    public enum Reason: String, Sendable {
        case disconnected
        case stale
    }

    public var sensorIndex: Int
    public var reason: Reason
    public var start: Int64
    public var end: Int64

    func clipped(to from: Int64, _ to: Int64) -> Dropout? {
        var copy = self
        copy.start = max(start, from)
        copy.end = min(end, to)
        return copy.end > copy.start ? copy : nil
    }
}
