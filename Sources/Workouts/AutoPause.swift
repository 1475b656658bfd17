/// Automatic pause, with thresholds written down: the timer stops once the rider has stood still for
/// `afterSeconds` (speed below `belowSpeedMetersPerSecond` or unknown, and no power and no cadence), and runs
/// again from the first second that is not still. Decided on the 1 Hz series, so replay and live agree.
public struct AutoPause: Equatable, Sendable {
    public var belowSpeedMetersPerSecond: Double
    public var afterSeconds: Int

    /// 1 m/s (3.6 km/h, walking pace) for 5 s: what bike computers use, give or take.
    public init(belowSpeedMetersPerSecond: Double = 1.0, afterSeconds: Int = 5) {
        self.belowSpeedMetersPerSecond = belowSpeedMetersPerSecond
        self.afterSeconds = afterSeconds
    }

    func isStill(_ sample: SecondSample) -> Bool {
        (sample.speedMetersPerSecond ?? 0) < belowSpeedMetersPerSecond && (sample.powerWatts ?? 0) <= 0
            && (sample.cadenceRPM ?? 0) <= 0
    }

    /// The texts of the markers it adds where it pauses and resumes the timer.
    public static let pauseMarker = "autoPause", resumeMarker = "autoResume"

    /// Takes still runs of at least `afterSeconds` off the timer; returns the pause and resume markers.
    func apply(to samples: inout [SecondSample], originMicroseconds origin: Int64) -> [WorkoutEvent] {
        var events: [WorkoutEvent] = []
        var index = 0
        while index < samples.count {
            guard isStill(samples[index]) else {
                index += 1
                continue
            }
            var end = index
            while end < samples.count && isStill(samples[end]) { end += 1 }
            if end - index >= afterSeconds {
                for second in index..<end {
                    samples[second].runningFraction = 0
                    samples[second].distanceMeters = 0
                }
                events.append(
                    WorkoutEvent(
                        timeMicroseconds: origin + Int64(index) * 1_000_000, control: .marker(Self.pauseMarker)))
                if end < samples.count {
                    events.append(
                        WorkoutEvent(
                            timeMicroseconds: origin + Int64(end) * 1_000_000, control: .marker(Self.resumeMarker)))
                }
            }
            index = end
        }
        return events
    }
}
