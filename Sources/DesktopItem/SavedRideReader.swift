import WorkoutStore
import Workouts

/// Reads what the desktop says of a ride once the recorder has saved it: its summary and the FTP it changed, from
/// the rides database (read-only, never waiting for the recorder's writes).
public struct SavedRideReader: Sendable {
    public let databasePath: String

    public init(databasePath: String) {
        self.databasePath = databasePath
    }

    /// The saved ride `workoutId`; nil while it is not saved (still being written) or when it cannot be read.
    public func read(_ workoutId: Int64) throws(StoreError) -> SavedRide? {
        let store = try WorkoutStore(path: databasePath, access: .read)
        guard let summary = try store.ride(workoutId, analysed: false)?.summary else { return nil }
        let statistics = summary.statistics
        return SavedRide(
            workoutId: workoutId, name: summary.plan.name ?? "", movingSeconds: statistics.movingSeconds,
            distanceMeters: statistics.distanceMeters, averagePowerWatts: statistics.averagePowerWatts,
            workJoules: statistics.workJoules, averageHeartRateBPM: statistics.averageHeartRateBPM,
            ftp: Self.change(by: workoutId, in: try store.ftpHistory()))
    }

    /// The FTP ride `workoutId` set or proposed, beside the one before it; nil when it changed nothing.
    static func change(by workoutId: Int64, in history: FTPHistory) -> SavedRide.FTPChange? {
        guard let estimate = history.estimates.last(where: { $0.workoutId == workoutId }) else { return nil }
        let before = history.inForce(at: estimate.effectiveMicroseconds - 1)?.watts
        if let before, abs(before - estimate.watts) < 0.5 { return nil }
        let now = Int64.max
        let pending = history.pending(at: now)?.workoutId == workoutId
        guard pending || history.inForce(at: now)?.workoutId == workoutId else { return nil }
        return SavedRide.FTPChange(watts: estimate.watts, previousWatts: before, pending: pending)
    }
}
