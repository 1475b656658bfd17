import RideWriting
import Workouts

/// One ride being recorded live: its pipeline (builder, journal, digests) and what the dashboard shows of it (the
/// last seconds, distance, work). A recorder has one at a time; with `record --auto`, one per ride. Pure: the
/// `RideStore` writes what it hands over.
struct LiveRide {
    let workoutId: Int64
    private(set) var pipeline: RidePipeline
    /// `record --auto`: when the ride ends for want of pedalling.
    private(set) var idleEnding: IdleEnding?
    /// A Start's `endAtGoal`: the ride ends and is saved once its goal is reached.
    let endAtGoal: Bool
    /// Problems the builder raised (a malformed notification, a refused control).
    private(set) var problemCount = 0
    /// Sensors whose low battery the rider has heard about during this ride.
    var warnedLowBattery: Set<String> = []
    /// The last three completed seconds.
    private(set) var recentSamples: [SecondSample] = []
    private(set) var distanceMeters = 0.0
    private(set) var workJoules = 0.0

    init(
        workoutId: Int64, configuration: WorkoutBuilder.Configuration, idleEnding: IdleEnding?, endAtGoal: Bool = false
    ) {
        self.workoutId = workoutId
        self.endAtGoal = endAtGoal
        pipeline = RidePipeline(configuration: configuration)
        self.idleEnding = idleEnding
    }

    var session: Session { pipeline.session }

    /// One event, into the journal and the builder; the problems it raised. After its end the ride takes none:
    /// what arrives while it is being saved belongs to no ride, and its stored journal and its digests must hold
    /// the same events (a notification digested during the last write, but never written, gave a contentDigest
    /// that `show --journal | sha256sum` did not).
    mutating func add(_ event: RideEvent) -> ArraySlice<BuildProblem> {
        if afterEnd != nil {
            // The End can still be undone: what comes meanwhile waits, and is the ride's only if it is.
            afterEnd?.append(event)
            return []
        }
        let isUndo = if case .control(.undo) = event.kind { true } else { false }
        guard isUndo || (session.state != .ended && session.state != .cancelled) else { return [] }
        let problems = pipeline.add(event)
        problemCount += problems.count
        if case .control(.undo) = event.kind { recount() }
        return problems
    }

    /// After an undo, which may have made seconds again: the totals and the last seconds from the ride as it now
    /// stands (the seconds not handed out yet are counted when they are).
    private mutating func recount() {
        let samples = pipeline.builder.samples(from: 0)
        distanceMeters = samples.reduce(0) { $0 + $1.distanceMeters }
        workJoules = samples.reduce(0) { $0 + ($1.isRunning ? $1.powerWatts ?? 0 : 0) }
        recentSamples = Array(samples.suffix(3))
    }

    /// The events since the ride's End while that End can be undone; nil otherwise.
    private(set) var afterEnd: [RideEvent]?

    /// The rider's End: kept open for its undo window.
    mutating func endCanBeUndone() { afterEnd = [] }

    /// The window passed (or `end --now`): what came after the End is not the ride's.
    mutating func endIsFinal() { afterEnd = nil }

    /// The End is undone: what came since goes into the ride (its undo comes next, and builds the ride again
    /// without the End).
    mutating func endUndone() {
        guard let held = afterEnd else { return }
        afterEnd = nil
        for event in held { _ = pipeline.add(event) }
    }

    /// What came since the last call, for the store writer; the seconds completed meanwhile are counted for
    /// the dashboard and the idle ending.
    mutating func takeBatch() -> WorkoutWriter.Batch {
        let completed = pipeline.takeCompletedSamples()
        if let origin = pipeline.session.startMicroseconds { idleEnding?.saw(completed, originMicroseconds: origin) }
        for sample in completed {
            distanceMeters += sample.distanceMeters
            if sample.isRunning { workJoules += sample.powerWatts ?? 0 }
        }
        recentSamples = Array((recentSamples + completed).suffix(3))
        return pipeline.takeBatch()
    }

    /// The workout as it stands, with its digests; nil when no measurement came.
    mutating func finishWorkout() -> WorkoutWriter.Finished? {
        pipeline.finishWorkout()
    }
}
