import StructuredWorkouts

/// A built workout: the session's outcome, the 1 Hz series and what happened along the way.
public struct Workout: Sendable {
    public var plan: WorkoutPlan
    public var state: Session.State
    public var startMicroseconds: Int64
    public var endMicroseconds: Int64
    public var samples: [SecondSample]
    /// The start of every lap after the first.
    public var lapStarts: [Int64]
    public var events: [WorkoutEvent]
    public var dropouts: [Dropout]
    public var sensors: [WorkoutSensor]
    /// The totals of the device that recorded the ride, for a ride imported from a bike computer's file.
    public var recordedTotals: RecordedTotals?
    /// The same per lap, in lap order, where the file has them.
    public var recordedLapTotals: [RecordedTotals] = []
    /// Seconds the plausibility rules rejected, per channel.
    public var rejectedSeconds: [Channel: Int] = [:]
    /// Problems found in the ride's events while it was built (a malformed value, a refused control, a clock
    /// fault): their bytes stay in the journal, and a rebuild lists them.
    public var problemCount = 0
    /// What the rider asked of a smart trainer, in time order (the journal's `trainer` lines).
    public var trainerTargets: [(timeMicroseconds: Int64, target: TrainerTarget)] = []
    /// Who held the trainer, in time order (the journal's `hub-holder` lines).
    public var trainerHolders: [TrainerHolding] = []
    /// The structured workout the ride followed, and how closely (nil for a ride without one).
    public var planCompliance: PlanCompliance?

    /// Measures the ride against its workout, and splits its laps where each step began (a lap the rider
    /// pressed within a second of a step's start is that step's lap, not another).
    mutating func followPlan(_ planned: PlannedWorkout, controls: [(timeMicroseconds: Int64, control: PlayerControl)]) {
        let compliance = PlanCompliance(
            samples[...], planned: planned, controls: controls, laps: lapStarts, startMicroseconds: startMicroseconds)
        planCompliance = compliance
        var starts = lapStarts
        for second in compliance.stepStartSeconds {
            let time = startMicroseconds + Int64(second) * 1_000_000
            if !starts.contains(where: { abs($0 - time) < 1_000_000 }) { starts.append(time) }
        }
        lapStarts = starts.sorted()
    }

    public init(
        plan: WorkoutPlan, state: Session.State, startMicroseconds: Int64, endMicroseconds: Int64,
        samples: [SecondSample], lapStarts: [Int64], events: [WorkoutEvent], dropouts: [Dropout],
        sensors: [WorkoutSensor], recordedTotals: RecordedTotals? = nil, recordedLapTotals: [RecordedTotals] = [],
        rejectedSeconds: [Channel: Int] = [:]
    ) {
        self.rejectedSeconds = rejectedSeconds
        self.plan = plan
        self.state = state
        self.startMicroseconds = startMicroseconds
        self.endMicroseconds = endMicroseconds
        self.samples = samples
        self.lapStarts = lapStarts
        self.events = events
        self.dropouts = dropouts
        self.sensors = sensors
        self.recordedTotals = recordedTotals
        self.recordedLapTotals = recordedLapTotals
    }

    /// The whole workout's statistics.
    public var statistics: WorkoutStatistics { statistics(powerCurve: powerCurve) }

    /// The whole workout's statistics, given its power curve (computing a 4-hour curve takes milliseconds).
    public func statistics(powerCurve: PowerCurve) -> WorkoutStatistics {
        var statistics = WorkoutStatistics(
            samples[...], elapsedSeconds: Double(endMicroseconds - startMicroseconds) / 1_000_000,
            powerCurve: powerCurve)
        statistics.rejectedSeconds = rejectedSeconds
        recordedTotals?.apply(to: &statistics)
        statistics.keepMovingWithinElapsed()
        statistics.trainer = TrainerStatistics(
            samples[...], targets: trainerTargets, holders: trainerHolders, startMicroseconds: startMicroseconds)
        statistics.plan = planCompliance
        return statistics
    }

    /// The power curve for every duration (see `WorkoutStatistics.powerCurve`).
    public var powerCurve: PowerCurve { WorkoutStatistics.powerCurve(samples) }

    /// One entry per lap (a workout without lap presses has one lap), with the same statistics.
    public var laps: [LapSummary] { laps(wholeRidePowerCurve: nil) }

    /// The laps, given the whole ride's power curve for a lap that spans the whole ride.
    public func laps(wholeRidePowerCurve: PowerCurve?) -> [LapSummary] {
        let boundaries = [startMicroseconds] + lapStarts.filter { $0 > startMicroseconds && $0 < endMicroseconds }
        return boundaries.enumerated().map { number, lapStart in
            let lapEnd = number + 1 < boundaries.count ? boundaries[number + 1] : endMicroseconds
            let first = secondIndex(lapStart),
                last = number + 1 < boundaries.count ? secondIndex(lapEnd) : samples.count
            let range = min(first, samples.count)..<min(max(first, last), samples.count)
            let wholeRide = range.count == samples.count ? wholeRidePowerCurve : nil
            var statistics = WorkoutStatistics(
                samples[range], elapsedSeconds: Double(lapEnd - lapStart) / 1_000_000, powerCurve: wholeRide)
            if number < recordedLapTotals.count { recordedLapTotals[number].apply(to: &statistics) }
            statistics.keepMovingWithinElapsed()
            return LapSummary(
                number: number + 1, startMicroseconds: lapStart, endMicroseconds: lapEnd, statistics: statistics)
        }
    }

    /// The 1 Hz bin a time falls in, rounded to the nearest boundary.
    private func secondIndex(_ time: Int64) -> Int {
        Int((time - startMicroseconds + 500_000) / 1_000_000)
    }
}

public struct LapSummary: Equatable, Sendable {
    public var number: Int
    public var startMicroseconds: Int64
    public var endMicroseconds: Int64
    public var statistics: WorkoutStatistics

    public init(number: Int, startMicroseconds: Int64, endMicroseconds: Int64, statistics: WorkoutStatistics) {
        self.number = number
        self.startMicroseconds = startMicroseconds
        self.endMicroseconds = endMicroseconds
        self.statistics = statistics
    }
}

/// The totals a bike computer wrote for a ride or lap it recorded. An imported ride keeps them rather than
/// recomputing them from the file's 1 Hz records: the device summed what its sensors sent between the seconds
/// and timed its pauses to the millisecond, so its totals are the better ones (and the ones the rider has seen).
public struct RecordedTotals: Equatable, Sendable {
    public var elapsedSeconds: Double?
    public var timerSeconds: Double?
    public var distanceMeters: Double?
    public var workJoules: Double?
    /// Totals of the device's that were not used, each with why (e.g. an elapsed time spanning a clock fault).
    public var corrections: [String] = []

    public init(
        elapsedSeconds: Double? = nil, timerSeconds: Double? = nil, distanceMeters: Double? = nil,
        workJoules: Double? = nil
    ) {
        self.elapsedSeconds = elapsedSeconds
        self.timerSeconds = timerSeconds
        self.distanceMeters = distanceMeters
        self.workJoules = workJoules
    }

    /// Replaces the computed totals with the recorded ones it has; average speed follows distance and time.
    func apply(to statistics: inout WorkoutStatistics) {
        statistics.corrections += corrections
        if let elapsedSeconds { statistics.elapsedSeconds = elapsedSeconds }
        if let timerSeconds {
            if timerSeconds > statistics.elapsedSeconds + 0.5 {
                // A timer cannot run longer than the ride: moving time is never shown above elapsed.
                statistics.corrections.append(
                    "the device's timer time \(Self.seconds(timerSeconds)) is longer than its elapsed time "
                        + "\(Self.seconds(statistics.elapsedSeconds)); moving time is shown as the elapsed time")
                statistics.movingSeconds = statistics.elapsedSeconds
            } else {
                statistics.movingSeconds = min(timerSeconds, statistics.elapsedSeconds)
            }
        }
        if let distanceMeters { statistics.distanceMeters = distanceMeters }
        if let workJoules, statistics.workJoules != nil || workJoules > 0 {
            if let rejected = statistics.rejectedSeconds[.powerWatts], rejected > 0,
                let computed = statistics.workJoules
            {
                // The device counted power that cannot be real: the work of the plausible seconds is shown.
                statistics.corrections.append(
                    "the device's work \(Int((workJoules / 1000).rounded())) kJ counts \(rejected) s of implausible "
                        + "power; \(Int((computed / 1000).rounded())) kJ without them")
            } else {
                statistics.workJoules = workJoules
            }
        }
        if statistics.movingSeconds > 0,
            statistics.averageSpeedMetersPerSecond != nil || statistics.distanceMeters > 0
        {
            statistics.averageSpeedMetersPerSecond = statistics.distanceMeters / statistics.movingSeconds
        }
    }

    /// `1:23:45` for a message.
    public static func seconds(_ value: Double) -> String {
        let whole = Int(value.rounded())
        let (hours, minutes, seconds) = (whole / 3600, whole / 60 % 60, whole % 60)
        return (hours > 0 ? "\(hours):" : "") + (hours > 0 && minutes < 10 ? "0" : "") + "\(minutes):"
            + (seconds < 10 ? "0" : "") + "\(seconds)"
    }
}
