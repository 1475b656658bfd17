import DBus
import Recording
import WorkoutStore
import Workouts

/// A live ride's writes, on a thread of their own: SQLite's calls block (a busy database waits up to 5 s), and
/// they must never hold up the recorder, which goes on taking notifications meanwhile. Batches are written in the
/// order the pipeline numbered them, whatever order they arrive in; a failed write keeps everything for the next.
actor StoreWriter {
    private let executor = QueueExecutor(label: "cyclelog.store-writer")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var writer: WorkoutWriter
    private var waiting: [Int: WorkoutWriter.Batch] = [:]
    private var nextSequence = 0

    init(store: WorkoutStore, claim: WorkoutStore.Claim) {
        writer = WorkoutWriter(store: store, claim: claim)
    }

    /// Writes `batch` and any batch it was waiting for; false when nothing was written (nothing to write, or
    /// an earlier batch has not arrived yet).
    func write(_ batch: WorkoutWriter.Batch) throws(StoreError) -> Bool {
        waiting[batch.sequence] = batch
        var merged = WorkoutWriter.Batch(sequence: nextSequence, events: [], samples: [])
        var any = false
        while let next = waiting.removeValue(forKey: nextSequence) {
            merged.events += next.events
            merged.samples += next.samples
            nextSequence += 1
            any = true
        }
        guard any else { return false }
        return try writer.write(merged)
    }

    func finish(_ finished: WorkoutWriter.Finished) throws(StoreError) -> WorkoutSummary {
        try writer.finish(finished)
    }

    func discard() throws(StoreError) {
        try writer.discard()
    }
}
