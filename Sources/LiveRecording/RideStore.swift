import Concurrency
import Foundation
import RideWriting
import StructuredWorkouts
import WorkoutStore
import Workouts

/// Every database call of a live recorder, on a thread of its own: SQLite's calls block (a busy database waits up
/// to 5 s), and they must never hold up the recorder, which goes on taking notifications meanwhile. It opens a
/// ride's row, writes its batches in the order the pipeline numbered them (whatever order they arrive in; a failed
/// write keeps everything for the next), finishes or deletes it, and answers the few questions the recorder asks
/// (the suggested workouts) and remembers the sensors used. It also measures how long a notification waits between
/// its arrival and the commit that stores it (`record --latency`, the benchmark).
actor RideStore {
    private let executor = QueueExecutor(label: "cyclelog.ride-store")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    let store: WorkoutStore
    /// The ride being written, with the batches that came before the one they follow.
    private var writer: WorkoutWriter?
    private var waiting: [Int: WorkoutWriter.Batch] = [:]
    private var nextSequence = 0
    /// When the notifications not yet stored arrived.
    private var arrivals: [ContinuousClock.Instant] = []
    /// Arrival-to-stored delays of the notifications stored so far.
    private(set) var latency = LatencyHistogram()

    init(_ store: WorkoutStore) {
        self.store = store
    }

    /// Writes `batch` and any batch it was waiting for; `arrivals` are when its notifications arrived, counted in
    /// `latency` once they are stored. A write that fails throws and keeps everything for the next one.
    func write(_ batch: WorkoutWriter.Batch, arrivals batchArrivals: [ContinuousClock.Instant]) throws(StoreError) {
        guard var writer else {
            arrivals.removeAll(keepingCapacity: true)
            return
        }
        arrivals += batchArrivals
        waiting[batch.sequence] = batch
        var merged = WorkoutWriter.Batch(sequence: nextSequence, events: [], samples: [])
        var any = false
        while let next = waiting.removeValue(forKey: nextSequence) {
            merged.events += next.events
            merged.samples += next.samples
            nextSequence += 1
            any = true
        }
        guard any else { return }
        defer { self.writer = writer }
        guard try writer.write(merged) else { return }
        let stored = ContinuousClock.now
        for arrival in arrivals { latency.add(seconds: (stored - arrival).seconds) }
        arrivals.removeAll(keepingCapacity: true)
    }

    /// Saves the ride as it stands and remembers the sensors it used; nil when nothing arrived (the row is
    /// dropped); or why it could not be saved.
    func finish(
        _ finished: WorkoutWriter.Finished?, sensorsUsed: [(address: String, name: String?)], at microseconds: Int64
    ) -> Result<WorkoutSummary?, StoreError> {
        guard let writer else { return .success(nil) }
        defer { self.writer = nil }
        do throws(StoreError) {
            guard let finished else {
                try writer.discard()
                return .success(nil)
            }
            let summary = try writer.finish(finished)
            // The ride is saved: a sensor list not updated is not worth reporting it as lost.
            try? store.rememberSensors(sensorsUsed, at: microseconds)
            return .success(summary)
        } catch {
            return .failure(error)
        }
    }

    /// Opens a new live ride's row and takes the writes that follow for it; counts the suggested workout as used
    /// (not worth failing a ride over). Its id and sync identifier, and its Start's workout read from the library
    /// with the FTP in force at `time` (an armed start opens at the first pedal stroke); or why the row did not open.
    func open(_ request: StartRequest, startMicroseconds: Int64, at time: Int64) -> Result<OpenedRide, StoreError> {
        // Lower-case, as RFC 9562 writes a UUID and as every other ride and the shared store have it.
        let syncIdentifier = UUID().uuidString.lowercased()
        let claim: WorkoutStore.Claim
        do throws(StoreError) {
            claim = try store.beginWorkout(
                syncIdentifier: syncIdentifier, source: "live", startMicroseconds: startMicroseconds)
        } catch {
            return .failure(error)
        }
        if let preset = request.plan.preset { try? store.presetUsed(preset, at: startMicroseconds) }
        writer = WorkoutWriter(store: store, claim: claim)
        waiting = [:]
        nextSequence = 0
        return .success(
            OpenedRide(
                workoutId: claim.workoutId, syncIdentifier: syncIdentifier,
                workout: request.workout.map { plannedWorkout($0, at: time) }))
    }

    struct OpenedRide: Sendable {
        var workoutId: Int64
        var syncIdentifier: String
        var workout: Result<PlannedWorkout, LiveRecorder.StartRefusal>?
    }

    /// A cancelled ride: its row and everything written for it go.
    func delete(_ workoutId: Int64) {
        writer = nil
        _ = try? store.delete(workoutId)
    }

    /// A library workout with the FTP in force at `time`, or why it cannot be ridden.
    func plannedWorkout(_ id: String, at time: Int64) -> Result<PlannedWorkout, LiveRecorder.StartRefusal> {
        do {
            return .success(try store.plannedWorkout(id, at: time))
        } catch {
            return .failure(.refused("\(error)"))
        }
    }

    /// What a guided test gave: the FTP it sets, and whether it is in force or waits for the rider.
    func testResult(_ workoutId: Int64) -> String? {
        (try? store.testScore(workoutId))??.words
    }

    /// The suggested workouts, pinned first, then the most recently used; the built-in ones when the database
    /// cannot say.
    func presets() -> [WorkoutPreset] {
        (try? store.presets().map(\.preset)) ?? WorkoutPreset.builtIn
    }
}
