import RideIdentity
import WorkoutStore
import Workouts

/// One ride's way from its events to what is stored, the same for a replay, a rebuild and a live ride: each
/// event goes to the journal (kept exactly as it came, digested as it goes) and to the workout builder; what has
/// come since the last time is handed out as a `WorkoutWriter.Batch` for the store, and the finished workout
/// with its digests. The builder's problems (a malformed notification, a refused control) are handed out once
/// each, so every source reports them alike. It does no I/O: a live ride hands its batches to a writer of its own
/// so that the database never holds up the sensors; a replay, whose events are all known, packs its journal apart.
public struct RidePipeline: Sendable {
    private var undoable: UndoableBuilder
    public var builder: WorkoutBuilder { undoable.builder }
    /// Given when the whole journal is known beforehand (a file); otherwise computed as the events come.
    private let knownDigests: WorkoutStore.Digests?
    private var computed = RideDigests()
    private var unwrittenEvents: [RideEvent] = []
    /// Samples handed to the caller by `takeCompletedSamples` and not yet in a batch.
    private var unwrittenSamples: [SecondSample] = []
    private var nextBatch = 0
    private var problemsHandedOut = 0
    /// An undo made samples again from this second on (the start of its stored chunk): the next batch replaces
    /// them.
    private var samplesRemadeFrom: Int?

    public var session: Session { undoable.builder.session }

    public init(configuration: WorkoutBuilder.Configuration = .init(), digests: WorkoutStore.Digests? = nil) {
        undoable = UndoableBuilder(WorkoutBuilder(configuration: configuration))
        knownDigests = digests
    }

    /// An event for the journal, stored as it came.
    public mutating func journal(_ event: RideEvent) {
        unwrittenEvents.append(event)
        if knownDigests == nil { computed.add(event) }
    }

    /// An event for the workout; returns the problems it raised.
    @discardableResult
    public mutating func build(_ event: RideEvent) -> ArraySlice<BuildProblem> {
        guard let kept = undoable.add(event) else {
            // The builder's own list, not a copy of the builder (`builder` is computed): this runs for every event.
            let problems = undoable.builder.problems
            guard problems.count > problemsHandedOut else { return [] }
            defer { problemsHandedOut = problems.count }
            return problems[problemsHandedOut...]
        }
        // An undo: the ride from the action on is built again. Every sample from the start of the chunk that holds
        // the first one made again (or from the first not yet in a batch) goes into the next batch, in place of what
        // was handed out and perhaps written: a stored chunk is replaced whole.
        let chunk = WorkoutStore.secondsPerSampleChunk
        let from = min(samplesRemadeFrom ?? .max, kept / chunk * chunk, unwrittenSamples.first?.second ?? .max)
        samplesRemadeFrom = from
        unwrittenSamples = Array(builder.samples(from: from))
        undoable.markHandedOut()
        // The problems the undone action raised are gone; the others were said already.
        problemsHandedOut = builder.problems.count
        return []
    }

    /// Both, for a source whose events come in order (a live ride).
    @discardableResult
    public mutating func add(_ event: RideEvent) -> ArraySlice<BuildProblem> {
        journal(event)
        return build(event)
    }

    /// The 1 Hz samples completed since the last call, for a live display; they go into the next batch.
    public mutating func takeCompletedSamples() -> [SecondSample] {
        let completed = Array(undoable.takeCompletedSamples())
        unwrittenSamples += completed
        return completed
    }

    /// The journal events and completed samples since the last batch, numbered in order.
    public mutating func takeBatch() -> WorkoutWriter.Batch {
        _ = takeCompletedSamples()
        defer {
            unwrittenEvents.removeAll(keepingCapacity: true)
            unwrittenSamples.removeAll(keepingCapacity: true)
            samplesRemadeFrom = nil
            nextBatch += 1
        }
        return WorkoutWriter.Batch(
            sequence: nextBatch, events: unwrittenEvents, samples: unwrittenSamples,
            samplesRemadeFrom: samplesRemadeFrom)
    }

    /// The workout as it stands, with its digests; nil when no measurement ever came. Take the last batch first.
    public mutating func finishWorkout() -> WorkoutWriter.Finished? {
        guard let workout = undoable.finish() else { return nil }
        return WorkoutWriter.Finished(
            workout: workout,
            digests: knownDigests ?? WorkoutStore.Digests(source: computed.sourceHex, content: computed.contentHex))
    }
}
