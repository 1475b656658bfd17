import Foundation
import Recording
import WorkoutStore

/// Rides stored in a database in memory, from a journal's text or a fixture file, through the replay every ride
/// takes: what the libraries above the store (charts, exports, the history) are tested on.
public enum StoredRides {
    /// A new database in memory holding the rides of `journals`, in order (ids 1, 2, …).
    public static func store(journals: [String]) throws -> WorkoutStore {
        let store = try WorkoutStore()
        for (index, text) in journals.enumerated() {
            _ = try Replayer(store: store).replay(CaptureFile.journal(text: text, label: "journal \(index + 1)"))
        }
        return store
    }

    /// A replay of the capture or journal at `file` into the database at `path` (made if missing).
    public static func replay(_ file: URL, into path: String) throws {
        _ = try Replayer(store: try WorkoutStore(path: path)).replay(CaptureFile.load(file.path))
    }

    /// The one ride of `journal`, as a chart or an export reads it.
    public static func ride(journal: String, analysed: Bool = false) throws -> WorkoutStore.StoredRide {
        let store = try store(journals: [journal])
        guard let ride = try store.ride(1, analysed: analysed) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "the journal stored no ride"])
        }
        return ride
    }
}
