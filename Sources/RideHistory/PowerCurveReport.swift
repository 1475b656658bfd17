import Formats
import WorkoutStore
import Workouts

/// The best power of a window of rides for every duration, with the rides that hold it and the critical-power
/// model: `GET /api/v1/power-curve` (what `cyclelog chart --power-curve` draws).
public enum PowerCurveReport {
    public static func window(_ store: WorkoutStore, days: Int) throws(StoreError) -> FTPWindow {
        try store.curveWindow(days: days)
    }

    /// `watts[d − 1]` is the best mean power over d seconds within the window, `workoutIds[d − 1]` the ride it
    /// came from.
    public static func json(_ window: FTPWindow) -> JSONValue {
        let estimate = window.estimate
        return .object([
            ("windowDays", .integer(Int64(window.days))),
            ("windowStart", .string(UTCTime.formatSeconds(microseconds: window.startMicroseconds))),
            ("windowEnd", .string(UTCTime.formatSeconds(microseconds: window.endMicroseconds))),
            ("windowRides", .integer(Int64(window.rideCount))),
            ("watts", .array(window.curve.watts.map { .rounded($0, 1) })),
            (
                "workoutIds",
                .array(window.envelope.sources.map { .integer(window.envelope.holders[$0].workoutId) })
            ),
            ("criticalPowerWatts", .rounded(estimate?.criticalPower?.criticalPowerWatts, 1)),
            ("wPrimeJoules", .rounded(estimate?.criticalPower?.wPrimeJoules, 0)),
        ])
    }

    /// A number of days written `42d`, `6w` or `42` (1 to 36 500 days), as `--window` and `?window=` take it.
    public static func days(_ text: String) -> Int? {
        let factor = text.hasSuffix("w") ? 7 : 1
        let digits = text.hasSuffix("w") || text.hasSuffix("d") ? text.dropLast() : Substring(text)
        guard let count = Int(digits), count > 0, count <= 36_500 else { return nil }
        return count * factor
    }
}
