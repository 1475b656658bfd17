import Formats
import WorkoutStore
import Workouts

/// The FTP in force, the window's critical-power fit and best 20 minutes, and the history: `cyclelog ftp` and
/// `GET /api/v1/ftp`.
public struct FTPReport: Sendable {
    public var history: FTPHistory
    public var window: FTPWindow
    /// Whether any complete ride is stored ("no rides stored" rather than "no FTP yet").
    public var hasRides: Bool

    public init(history: FTPHistory, window: FTPWindow, hasRides: Bool) {
        self.history = history
        self.window = window
        self.hasRides = hasRides
    }

    /// The report of a database, its window of `days` ending with the newest stored ride (whose curves alone are
    /// read). Without `wholeHistory`, `history` holds only the automatic values the present depends on: enough
    /// for the value in force and the one waiting, not for `history.entries` (nor `json`).
    public init(_ store: WorkoutStore, days: Int, wholeHistory: Bool = true) throws(StoreError) {
        self.init(
            history: try store.ftpHistory(asOf: wholeHistory ? nil : [.max]),
            window: try store.curveWindow(days: days, maximumSeconds: CriticalPowerFit.aerobicSeconds.upperBound),
            hasRides: try store.hasCompleteRide())
    }

    public var inForce: FTPEstimate? { history.inForce(at: .max) }
    public var estimate: FTPEstimate? { window.estimate }
    public var best20: FTPEffort? { window.effort(seconds: 1200) }

    /// The JSON of `cyclelog ftp --json` (keys in Docs/reference/json.md).
    public var json: JSONValue {
        let efforts = estimate?.efforts ?? (best20.map { [$0] } ?? [])
        return .object([
            ("ftpWatts", .rounded(inForce?.watts, 1)),
            ("method", .optionalString(inForce?.method.rawValue)),
            ("workoutId", inForce?.workoutId.map { .integer($0) } ?? .null),
            (
                "effective",
                inForce.map { .string(UTCTime.formatSeconds(microseconds: $0.effectiveMicroseconds)) } ?? .null
            ),
            ("criticalPowerWatts", .rounded(estimate?.criticalPower?.criticalPowerWatts, 1)),
            ("wPrimeJoules", .rounded(estimate?.criticalPower?.wPrimeJoules, 0)),
            ("best20MinuteWatts", .rounded(best20?.watts, 1)),
            ("ftpFrom20MinuteWatts", .rounded(best20.map { 0.95 * $0.watts }, 1)),
            ("windowDays", .integer(Int64(window.days))),
            ("windowStart", .string(UTCTime.formatSeconds(microseconds: window.startMicroseconds))),
            ("windowEnd", .string(UTCTime.formatSeconds(microseconds: window.endMicroseconds))),
            ("windowRides", .integer(Int64(window.rideCount))),
            ("efforts", .array(efforts.map(Self.effortJSON))),
            ("pending", history.pending(at: .max).map(Self.entryJSON) ?? .null),
            ("history", .array(history.entries.map(Self.entryJSON))),
        ])
    }

    static func effortJSON(_ effort: FTPEffort) -> JSONValue {
        .object([
            ("workoutId", .integer(effort.workoutId)),
            ("date", .string(UTCTime.formatSeconds(microseconds: effort.rideStartMicroseconds))),
            ("durationSeconds", .integer(Int64(effort.durationSeconds))),
            ("watts", .rounded(effort.watts, 1)),
        ])
    }

    static func entryJSON(_ entry: FTPEstimate) -> JSONValue {
        .object([
            ("date", .string(UTCTime.formatSeconds(microseconds: entry.effectiveMicroseconds))),
            ("method", .string(entry.method.rawValue)),
            ("ftpWatts", .rounded(entry.watts, 1)),
            ("workoutId", entry.workoutId.map { .integer($0) } ?? .null),
            ("criticalPowerWatts", .rounded(entry.criticalPower?.criticalPowerWatts, 1)),
            ("wPrimeJoules", .rounded(entry.criticalPower?.wPrimeJoules, 0)),
            ("best20MinuteWatts", .rounded(entry.best20MinuteWatts, 1)),
            ("efforts", .array(entry.efforts.map(effortJSON))),
        ])
    }
}
