import Export
import Formats
import WorkoutStore
import Workouts

/// A stored ride as a file for other programs (Strava, intervals.icu, a spreadsheet): FIT with the pedal balance
/// from its journal, TCX or CSV. Damaged stored samples are left out as gaps and named.
public enum RideExport {
    public enum Format: String, CaseIterable, Sendable {
        case fit, tcx, csv
    }

    /// The file's bytes of a stored ride (read by `WorkoutStore.ride(_:analysed:)`; a file needs no analysis),
    /// written without the types `leavingOut` (a screen or a service not given them): their values and what is
    /// worked out from them are not in it, as in a ride recorded without those sensors. What could not be read is
    /// in `ride.damaged`, left out as gaps.
    public static func file(
        _ ride: WorkoutStore.StoredRide, format: Format, from store: WorkoutStore, leavingOut: Set<DataType> = []
    ) throws(StoreError) -> [UInt8] {
        let ride = ride.withholding(leavingOut)
        let summary = ride.summary
        switch format {
        case .fit:
            // The pedal balance is the power meter's: with power, or not at all.
            let measurements =
                leavingOut.contains(.power)
                ? []
                : try store.journalNotifications(
                    summary.id, of: FITActivity.pedalBalanceCharacteristic, where: FITActivity.carriesPedalBalance)
            let balance = FITActivity.pedalBalanceBytes(measurements, startMicroseconds: summary.startMicroseconds)
            return FITActivity.encode(summary, samples: ride.samples, pedalBalance: balance)
        case .tcx: return Array(TCXDocument.encode(summary, samples: ride.samples).utf8)
        case .csv: return Array(CSVTable.encode(summary, samples: ride.samples).utf8)
        }
    }

    /// `cyclelog-<id>-<date>.<format>`.
    public static func fileName(_ summary: WorkoutSummary, format: Format) -> String {
        fileName(summary, ending: format.rawValue)
    }

    /// `cyclelog-<id>-<date>.<ending>`, for a file of the ride that is not an export (its journal).
    public static func fileName(_ summary: WorkoutSummary, ending: String) -> String {
        let date = UTCTime.formatSeconds(microseconds: summary.startMicroseconds).prefix(10)
        return "cyclelog-\(summary.id)-\(date).\(ending)"
    }

    /// The complete rides that started at or after `startMicroseconds`, oldest first.
    public static func rides(since startMicroseconds: Int64, in store: WorkoutStore) throws(StoreError) -> [Int64] {
        try store.list().filter { $0.status == .complete && $0.startMicroseconds >= startMicroseconds }.map(\.id)
            .reversed()
    }
}
