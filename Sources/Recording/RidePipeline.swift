import RideIdentity
import WorkoutStore
import Workouts

/// One ride's way from its events to the store, the same for a replay, a rebuild and a live ride: each event goes
/// to the journal (kept exactly as it came, digested as it goes) and to the workout builder; `write` stores what
/// has come since the last call in one small transaction; `finish` stores the workout with its digests. The
/// builder's problems (a malformed notification, a refused control) are handed out once each, so every source
/// reports them alike.
public struct RidePipeline {
    public private(set) var builder: WorkoutBuilder
    private var writer: WorkoutWriter
    /// Given when the whole journal is known beforehand (a file); otherwise computed as the events come.
    private let knownDigests: WorkoutStore.Digests?
    private var content = JournalDigest()
    private var source = JournalDigest()
    private var unwrittenEvents: [RideEvent] = []
    /// Samples handed to the caller by `takeCompletedSamples` and not yet given to the writer.
    private var samplesForWriter: [SecondSample] = []
    private var problemsHandedOut = 0

    public var workoutId: Int64 { writer.workoutId }
    public var session: Session { builder.session }
    public var store: WorkoutStore { writer.store }

    public init(
        store: WorkoutStore, claim: WorkoutStore.Claim, configuration: WorkoutBuilder.Configuration = .init(),
        digests: WorkoutStore.Digests? = nil
    ) {
        builder = WorkoutBuilder(configuration: configuration)
        writer = WorkoutWriter(store: store, claim: claim)
        knownDigests = digests
    }

    /// An event for the journal, stored as it came.
    public mutating func journal(_ event: RideEvent) {
        unwrittenEvents.append(event)
        guard knownDigests == nil else { return }
        content.add(event)
        if case .setting = event.kind { return }
        source.add(event)
    }

    /// An event for the workout; returns the problems it raised.
    @discardableResult
    public mutating func build(_ event: RideEvent) -> ArraySlice<BuildProblem> {
        builder.add(event)
        defer { problemsHandedOut = builder.problems.count }
        return builder.problems[problemsHandedOut...]
    }

    /// Both, for a source whose events come in order (a live ride).
    @discardableResult
    public mutating func add(_ event: RideEvent) -> ArraySlice<BuildProblem> {
        journal(event)
        return build(event)
    }

    /// The 1 Hz samples completed since the last call, for a live display; they are stored by the next `write`.
    public mutating func takeCompletedSamples() -> [SecondSample] {
        let completed = Array(builder.takeCompletedSamples())
        samplesForWriter += completed
        return completed
    }

    /// One small transaction with the journal events and the whole chunks of samples since the last one. Returns
    /// false when there was nothing to write. A failed write keeps everything for the next call.
    @discardableResult
    public mutating func write() throws(StoreError) -> Bool {
        _ = takeCompletedSamples()
        let samples = samplesForWriter
        // The writer holds the samples from here on, whether or not this transaction lands.
        samplesForWriter = []
        guard try writer.write(events: unwrittenEvents, completedSamples: samples) else { return false }
        unwrittenEvents.removeAll(keepingCapacity: true)
        return true
    }

    /// The last transactions: what is left, then the workout with its digests. Nil, with the workout row deleted,
    /// when no measurement ever came.
    public mutating func finish() throws(StoreError) -> WorkoutSummary? {
        try write()
        guard let workout = builder.finish() else {
            _ = try store.delete(workoutId)
            return nil
        }
        let digests = knownDigests ?? WorkoutStore.Digests(source: source.hex, content: content.hex)
        return try store.finish(writer.claim, workout: workout, digests: digests)
    }
}
