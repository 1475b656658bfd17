import Formats
import Workouts

/// One row per second of a ride, units in the column names; an empty cell is a second without that value.
public enum CSVTable {
    public static let header =
        "time_utc,elapsed_s,timer_running,power_w,cadence_rpm,speed_m_per_s,heart_rate_bpm,distance_m"

    public static func encode(_ summary: WorkoutSummary, samples: [SecondSample]) -> String {
        var lines = [header]
        lines.reserveCapacity(samples.count + 1)
        for second in RideSecond.list(samples, startMicroseconds: summary.startMicroseconds) {
            let sample = second.sample
            let cells = [
                UTCTime.formatSeconds(microseconds: second.timeMicroseconds), String(sample.second),
                sample.isRunning ? "1" : "0", cell(sample.powerWatts, 0), cell(sample.cadenceRPM, 0),
                cell(sample.speedMetersPerSecond, 3), cell(sample.heartRateBPM, 0), cell(second.distanceMeters, 2),
            ]
            lines.append(cells.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func cell(_ value: Double?, _ decimals: Int) -> String {
        guard let value, value.isFinite else { return "" }
        return JSONValue.rounded(value, decimals).rendered()
    }
}
