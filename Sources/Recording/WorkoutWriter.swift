import Foundation
import WorkoutStore
import Workouts

/// Writes a workout while it is being built, for a replay and a live ride alike: each `write` is one small
/// transaction with the journal events given and every whole chunk of the samples completed so far; the rest
/// of the samples waits for the next call. A failed write keeps everything for the next one.
public struct WorkoutWriter {
    public let store: WorkoutStore
    /// The hold on the workout's row that every write checks and renews.
    public let claim: WorkoutStore.Claim
    private var journalSequence = 0
    private var pendingSamples: [SecondSample] = []
    private var lastWrite = ContinuousClock.now

    public var workoutId: Int64 { claim.workoutId }

    public init(store: WorkoutStore, claim: WorkoutStore.Claim) {
        self.store = store
        self.claim = claim
    }

    /// Returns false when there was nothing to write (no events and no whole chunk of samples); the claim is then
    /// renewed every few seconds, so that a quiet ride is never taken for an abandoned one.
    @discardableResult
    public mutating func write(
        events: some Collection<RideEvent>, completedSamples: some Collection<SecondSample>
    ) throws(StoreError) -> Bool {
        pendingSamples += completedSamples
        let chunk = WorkoutStore.secondsPerSampleChunk
        let whole = pendingSamples.count / chunk * chunk
        guard !events.isEmpty || whole > 0 else {
            if ContinuousClock.now - lastWrite > .seconds(5) {
                try store.renewClaim(claim)
                lastWrite = ContinuousClock.now
            }
            return false
        }
        lastWrite = ContinuousClock.now
        try store.append(
            to: claim, journalSequence: journalSequence, events: events, samples: pendingSamples[..<whole])
        journalSequence += 1
        pendingSamples.removeFirst(whole)
        return true
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
