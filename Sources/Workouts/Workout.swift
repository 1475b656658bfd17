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

    /// The whole workout's statistics.
    public var statistics: WorkoutStatistics { statistics(powerCurve: powerCurve) }

    /// The whole workout's statistics, given its power curve (computing a 4-hour curve takes milliseconds).
    public func statistics(powerCurve: PowerCurve) -> WorkoutStatistics {
        WorkoutStatistics(
            samples[...], elapsedSeconds: Double(endMicroseconds - startMicroseconds) / 1_000_000,
            powerCurve: powerCurve)
    }

    /// The power curve for every duration (see `WorkoutStatistics.powerCurve`).
    public var powerCurve: PowerCurve { WorkoutStatistics.powerCurve(samples) }

    /// One entry per lap (a workout without lap presses has one lap), with the same statistics.
    public var laps: [LapSummary] {
        let boundaries = [startMicroseconds] + lapStarts.filter { $0 > startMicroseconds && $0 < endMicroseconds }
        return boundaries.enumerated().map { number, lapStart in
            let lapEnd = number + 1 < boundaries.count ? boundaries[number + 1] : endMicroseconds
            let first = secondIndex(lapStart),
                last = number + 1 < boundaries.count ? secondIndex(lapEnd) : samples.count
            let range = min(first, samples.count)..<min(max(first, last), samples.count)
            return LapSummary(
                number: number + 1, startMicroseconds: lapStart, endMicroseconds: lapEnd,
                statistics: WorkoutStatistics(samples[range], elapsedSeconds: Double(lapEnd - lapStart) / 1_000_000))
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
