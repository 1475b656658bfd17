import Foundation
import WorkoutStore
import Workouts

/// Writes a workout while it is being built, for a replay and a live ride alike: each `write` is one small
/// transaction with the journal events given and every whole chunk of the samples completed so far; the rest
/// of the samples waits for the next call. A failed write keeps everything for the next one.
public struct WorkoutWriter {
    public let store: WorkoutStore
    public let workoutId: Int64
    private var journalSequence = 0
    private var pendingSamples: [SecondSample] = []

    public init(store: WorkoutStore, workoutId: Int64) {
        self.store = store
        self.workoutId = workoutId
    }

    /// Returns false when there was nothing to write (no events and no whole chunk of samples).
    @discardableResult
    public mutating func write(
        events: some Collection<RideEvent>, completedSamples: some Collection<SecondSample>
    ) throws(StoreError) -> Bool {
        pendingSamples += completedSamples
        let chunk = WorkoutStore.secondsPerSampleChunk
        let whole = pendingSamples.count / chunk * chunk
        guard !events.isEmpty || whole > 0 else { return false }
        try store.append(
            to: workoutId, journalSequence: journalSequence, events: events, samples: pendingSamples[..<whole])
        journalSequence += 1
        pendingSamples.removeFirst(whole)
        return true
    }
}

/// Now, in microseconds since 1970 (UTC): the clock a live ride's journal and the rider's own settings use.
public func wallClockMicroseconds() -> Int64 {
    Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
}
