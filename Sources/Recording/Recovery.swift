import WorkoutStore
import Workouts

/// `cyclelog recover`: the rides that were cut short (a crash, a kill, a power cut), each saved again from what was
/// stored of it, as a replay of its journal (or its imported file) would save it.
public enum RideRecovery {
    /// What became of one unfinished ride.
    public enum Outcome: Sendable {
        /// Being recorded or replayed right now: left alone.
        case busy(Int64)
        /// Cut short between its row and its first journal chunk: nothing of it was stored, so the row is deleted.
        case discarded(Int64)
        /// Rebuilt and saved.
        case recovered(Int64, WorkoutSummary)
        /// Could not be rebuilt, and why; the ride is kept as it was.
        case failed(Int64, ReplayError)
    }

    /// Every unfinished ride in `store`, in the order `list` gives them, with what became of it; none when every
    /// stored ride is complete.
    public static func run(_ store: WorkoutStore) throws(StoreError) -> [Outcome] {
        var outcomes: [Outcome] = []
        for entry in try store.list() where entry.status != .complete {
            if try store.isBeingWritten(entry.id) {
                outcomes.append(.busy(entry.id))
                continue
            }
            // A ride is rebuilt from its journal, or from its imported file when it came from one.
            let journalled = try !store.journal(entry.id).isEmpty
            if !journalled, try store.importedFile(entry.id) == nil {
                _ = try store.delete(entry.id)
                outcomes.append(.discarded(entry.id))
            } else {
                do throws(ReplayError) {
                    outcomes.append(.recovered(entry.id, try Replayer(store: store).rebuild(entry.id).summary))
                } catch {
                    outcomes.append(.failed(entry.id, error))
                }
            }
        }
        return outcomes
    }
}
