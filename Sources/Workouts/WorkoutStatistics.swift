import StructuredWorkouts

/// The statistics of a workout or a lap, following Docs/reference/workouts.md: moving time excludes pauses; averages and work
/// use moving time; power averages include zeros (coasting) while cadence averages exclude them; NP over full
/// 30-s windows; the power curve never spans a pause and has spikes removed. Values that do not apply are nil.
public struct WorkoutStatistics: Equatable, Sendable {
    public var elapsedSeconds: Double
    /// Elapsed minus manual and automatic pauses.
    public var movingSeconds: Double
    public var distanceMeters: Double
    /// Mean power over the moving seconds that had a power value (a dropout is not 0 W of riding).
    public var averagePowerWatts: Double?
    public var maximumPowerWatts: Double?
    /// Fourth root of the mean fourth power of the 30-s rolling mean, full windows only (null under 30 s).
    public var normalizedPowerWatts: Double?
    /// Joules: power integrated over moving time.
    public var workJoules: Double?
    /// Mean of the non-zero cadence seconds, as bike computers show it.
    public var averageCadenceRPM: Double?
    public var maximumCadenceRPM: Double?
    /// Distance over moving time.
    public var averageSpeedMetersPerSecond: Double?
    public var maximumSpeedMetersPerSecond: Double?
    public var averageHeartRateBPM: Double?
    public var maximumHeartRateBPM: Double?
    /// Best mean power for each standard duration the moving time allows (duration in seconds).
    public var powerCurveWatts: [Int: Double] = [:]
    /// Seconds whose value the plausibility rules rejected, per channel (the whole ride's; `Plausibility`).
    public var rejectedSeconds: [Channel: Int] = [:]
    /// Values the device wrote that were corrected, each with why (an imported ride's totals).
    public var corrections: [String] = []
    /// How the ride used a smart trainer; nil when it asked nothing of one.
    public var trainer: TrainerStatistics?
    /// How the ride followed its structured workout (nil without one).
    public var plan: PlanCompliance?

    /// The durations reported in `powerCurveWatts` (the JSON contract asks for at least 1, 5, 60, 300, 1200, 3600).
    public static let powerCurveDurations = [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 5400, 7200]

    /// The statistics of these seconds; `powerCurve` is their curve when the caller already has it.
    public init(_ samples: ArraySlice<SecondSample>, elapsedSeconds: Double, powerCurve: PowerCurve? = nil) {
        self.elapsedSeconds = elapsedSeconds
        movingSeconds = samples.reduce(0) { $0 + $1.runningFraction }
        distanceMeters = samples.reduce(0) { $0 + $1.distanceMeters }
        let running = samples.filter(\.isRunning)
        let hasPower = running.contains { $0.powerWatts != nil }

        if hasPower {
            var work = 0.0, poweredSeconds = 0.0
            for sample in samples {
                guard let watts = sample.powerWatts else { continue }
                work += watts * sample.runningFraction
                poweredSeconds += sample.runningFraction
            }
            workJoules = work
            averagePowerWatts = poweredSeconds > 0 ? work / poweredSeconds : nil
            maximumPowerWatts = running.compactMap(\.powerWatts).max()
            // The gap rule (Docs/reference/workouts.md): a second without power is not riding at 0 W; NP, like the average, leaves
            // it out.
            normalizedPowerWatts = PowerMetrics.normalizedPower(running.compactMap(\.powerWatts))
            let curve = powerCurve ?? Self.powerCurve(samples)
            for duration in Self.powerCurveDurations {
                if let watts = curve.watts(seconds: duration) { powerCurveWatts[duration] = watts }
            }
        }

        let cadences = running.compactMap(\.cadenceRPM)
        let pedalling = cadences.filter { $0 > 0 }
        averageCadenceRPM = pedalling.isEmpty ? nil : pedalling.reduce(0, +) / Double(pedalling.count)
        maximumCadenceRPM = cadences.max()

        let speeds = running.compactMap(\.speedMetersPerSecond)
        maximumSpeedMetersPerSecond = speeds.max()
        if (!speeds.isEmpty || distanceMeters > 0) && movingSeconds > 0 {
            averageSpeedMetersPerSecond = distanceMeters / movingSeconds
        }

        let heartRates = running.compactMap(\.heartRateBPM)
        averageHeartRateBPM = heartRates.isEmpty ? nil : heartRates.reduce(0, +) / Double(heartRates.count)
        maximumHeartRateBPM = heartRates.max()
    }

    /// Moving time is never shown above elapsed time (a device's timer, or its records, a second longer than its
    /// elapsed time); the correction is named.
    public mutating func keepMovingWithinElapsed() {
        guard movingSeconds > elapsedSeconds else { return }
        if movingSeconds - elapsedSeconds >= 0.5 && !corrections.contains(where: { $0.contains("timer time") }) {
            corrections.append(
                "the moving time \(RecordedTotals.seconds(movingSeconds)) was longer than the elapsed time "
                    + "\(RecordedTotals.seconds(elapsedSeconds)); moving time is shown as the elapsed time")
        }
        movingSeconds = elapsedSeconds
        if averageSpeedMetersPerSecond != nil && movingSeconds > 0 {
            averageSpeedMetersPerSecond = distanceMeters / movingSeconds
        }
    }

    /// The ride's power curve for every duration: the pointwise maximum over its running segments, each with
    /// spikes removed (a window never spans a pause or a gap without power).
    public static func powerCurve(_ samples: some Collection<SecondSample>) -> PowerCurve {
        PowerCurve(segments: runningPowerSegments(samples).map { SpikeFilter.filtered($0).watts })
    }

    /// The power of each stretch of running seconds with power: a pause or a gap ends a stretch.
    static func runningPowerSegments(_ samples: some Collection<SecondSample>) -> [[Double]] {
        var segments: [[Double]] = []
        var current: [Double] = []
        for sample in samples {
            if sample.isRunning, let watts = sample.powerWatts {
                current.append(watts)
            } else if !current.isEmpty {
                segments.append(current)
                current = []
            }
        }
        if !current.isEmpty { segments.append(current) }
        return segments
    }
}
