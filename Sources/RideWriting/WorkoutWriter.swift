import Foundation
import WorkoutStore
import Workouts

/// Writes a workout while it is being built, for a replay and a live ride alike: each batch from the
/// `RidePipeline` is one small transaction with its journal events and every whole chunk of the samples so far;
/// the rest of the samples waits for the next one. A failed write keeps everything for the next one.
public struct WorkoutWriter: Sendable {
    /// What came since the last batch: the journal events as they came and the completed 1 Hz samples.
    public struct Batch: Sendable {
        /// Batches are written in this order, whatever order they reach a writer in.
        public var sequence: Int
        public var events: [RideEvent]
        public var samples: [SecondSample]
        /// An undo made the ride's samples again from this second on: `samples` starts there and replaces every
        /// sample from there that an earlier batch gave.
        public var samplesRemadeFrom: Int?

        public init(sequence: Int, events: [RideEvent], samples: [SecondSample], samplesRemadeFrom: Int? = nil) {
            self.sequence = sequence
            self.events = events
            self.samples = samples
            self.samplesRemadeFrom = samplesRemadeFrom
        }
    }

    /// A workout built to its end, with its digests.
    public struct Finished: Sendable {
        public var workout: Workout
        public var digests: WorkoutStore.Digests
    }

    public let store: WorkoutStore
    /// The hold on the workout's row that every write checks and renews.
    public let claim: WorkoutStore.Claim
    private var journalSequence = 0
    private var pendingEvents: [RideEvent] = []
    private var pendingSamples: [SecondSample] = []
    private var lastWrite = ContinuousClock.now

    public var workoutId: Int64 { claim.workoutId }

    public init(store: WorkoutStore, claim: WorkoutStore.Claim) {
        self.store = store
        self.claim = claim
    }

    /// Writes a batch with whatever an earlier failed write left. Returns false when there was nothing to write
    /// (no events and no whole chunk of samples); the claim is then renewed every few seconds, so that a quiet
    /// ride is never taken for an abandoned one.
    @discardableResult
    public mutating func write(_ batch: Batch) throws(StoreError) -> Bool {
        pendingEvents += batch.events
        if let from = batch.samplesRemadeFrom {
            // What is pending stays up to there; the stored chunks from there are written again (from a chunk's
            // start, or from where the pending ones start).
            pendingSamples.removeAll { $0.second >= from }
        }
        pendingSamples += batch.samples
        let chunk = WorkoutStore.secondsPerSampleChunk
        let whole = pendingSamples.count / chunk * chunk
        guard !pendingEvents.isEmpty || whole > 0 else {
            if ContinuousClock.now - lastWrite > .seconds(5) {
                try store.renewClaim(claim)
                lastWrite = ContinuousClock.now
            }
            return false
        }
        lastWrite = ContinuousClock.now
        try store.append(
            to: claim, journalSequence: journalSequence, events: pendingEvents, samples: pendingSamples[..<whole])
        journalSequence += 1
        pendingEvents.removeAll(keepingCapacity: true)
        pendingSamples.removeFirst(whole)
        return true
    }

    /// Writes a piece of the journal packed beforehand (`CompactJournal.encode`), alone: a replay, whose pieces
    /// are packed on another core while the workout is built, and whose 1 Hz series `finish` writes whole. Its
    /// commit does not wait for the disk: `finish`'s does, for every piece before it (a power cut before then
    /// leaves an unfinished ride, which the file it came from gives again).
    public mutating func write(packedJournal: [UInt8]) throws(StoreError) {
        precondition(pendingEvents.isEmpty && pendingSamples.isEmpty, "a writer takes events or packed pieces")
        lastWrite = ContinuousClock.now
        try store.append(
            to: claim, journalSequence: journalSequence, packedJournal: packedJournal, samples: [SecondSample](),
            durable: false)
        journalSequence += 1
    }

    /// The last transaction: the workout, complete from here on. Write the last batch first.
    public func finish(_ finished: Finished) throws(StoreError) -> WorkoutSummary {
        try store.finish(claim, workout: finished.workout, digests: finished.digests)
    }

    /// The same with the workout's stored parts made beforehand (`WorkoutStore.PreparedWorkout`), and a pulled
    /// ride's marks taken in the same transaction.
    public func finish(
        _ prepared: WorkoutStore.PreparedWorkout, digests: WorkoutStore.Digests,
        pulled: WorkoutStore.PulledMarks? = nil
    ) throws(StoreError) -> WorkoutSummary {
        try store.finish(claim, prepared: prepared, digests: digests, pulled: pulled)
    }

    /// No measurement came: the workout row goes; a ride that had no version before leaves no deletion behind.
    public func discard() throws(StoreError) {
        _ = try store.delete(claim.workoutId, leavingNoTrace: true)
    }
}

/// Now, in microseconds since 1970 (UTC): the clock a live ride's journal and the rider's own settings use.
public func wallClockMicroseconds() -> Int64 {
    Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
}

/// A live ride's clock: the wall clock read once, when the recorder starts, then advanced by the kernel's
/// CLOCK_BOOTTIME. An NTP step or a rider setting the clock during the ride cannot make the journal leap or go
/// back, and a suspended laptop's sleep still counts as elapsed time (CLOCK_MONOTONIC would leave it out).
public struct RideClock: Sendable {
    private let wallAtStartMicroseconds: Int64
    private let bootAtStartMicroseconds: Int64

    public init() {
        wallAtStartMicroseconds = wallClockMicroseconds()
        bootAtStartMicroseconds = Self.bootTimeMicroseconds()
    }

    /// Now, in microseconds since 1970 (UTC) as the wall clock said at the start.
    public func now() -> Int64 {
        wallAtStartMicroseconds + (Self.bootTimeMicroseconds() - bootAtStartMicroseconds)
    }

    /// `clock_gettime(CLOCK_BOOTTIME)`: cannot fail for a valid clock id, and never goes back.
    static func bootTimeMicroseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
    }
}
