import Formats

/// A `WorkoutBuilder` whose rider actions can be taken back: an `undo` event rebuilds the ride as if the action it
/// names had never come, so that a live ride and a replay of its journal agree (Docs/reference/journal.md, undo).
///
/// For each action that can be undone (`RideEvent.undoable`) in the last `holdMicroseconds`, it keeps the builder
/// as it was just before the action, and every event built since the oldest of them. An undo goes back to the
/// builder before its action and builds the events after it again, without the action. A builder is a value, so
/// keeping one costs a copy of what it changes next; a ride has tens of actions, not thousands.
public struct UndoableBuilder: Sendable {
    /// How far back an undo can reach in the journal: twice the 30 s in which a live recorder takes one, so that a
    /// journal it wrote never holds an undo its builder cannot carry out.
    public static let holdMicroseconds: Int64 = 60_000_000

    private struct Point: Sendable {
        /// Where the action is in `since`.
        var index: Int
        var before: WorkoutBuilder
    }

    public private(set) var builder: WorkoutBuilder
    private var points: [Point] = []
    /// The events built since the oldest point, the undone ones (and the undos) left out.
    private var since: [RideEvent] = []

    public init(_ builder: WorkoutBuilder) {
        self.builder = builder
    }

    /// Feeds one event. For an undo that was carried out: the number of samples that stand as they were; the
    /// samples from there on were made again.
    public mutating func add(_ event: RideEvent) -> Int? {
        if case .control(.undo(let undone)) = event.kind { return undo(undone, at: event) }
        build(event)
        return nil
    }

    /// As `WorkoutBuilder.takeCompletedSamples`.
    public mutating func takeCompletedSamples() -> ArraySlice<SecondSample> { builder.takeCompletedSamples() }

    /// As `WorkoutBuilder.finish`: the ride as it stands, nothing left to undo.
    public mutating func finish() -> Workout? {
        points.removeAll()
        since.removeAll()
        return builder.finish()
    }

    /// Every completed sample counts as handed out (`WorkoutBuilder.markHandedOut`).
    public mutating func markHandedOut() { builder.markHandedOut() }

    private mutating func build(_ event: RideEvent) {
        if points.isEmpty, case .notification = event.kind {
            // Nearly every event of a ride, with nothing to keep for an undo: the builder's alone.
            builder.add(event)
            return
        }
        if let first = points.first,
            since[first.index].timeMicroseconds < event.timeMicroseconds - Self.holdMicroseconds
        {
            forget(before: event.timeMicroseconds - Self.holdMicroseconds)
        }
        if event.undoable != nil { points.append(Point(index: since.count, before: builder)) }
        if !points.isEmpty { since.append(event) }
        builder.add(event)
    }

    private mutating func undo(_ undone: UndoneAction, at event: RideEvent) -> Int? {
        guard
            let found = points.lastIndex(where: {
                since[$0.index].timeMicroseconds == undone.timeMicroseconds && since[$0.index].undoable == undone
            })
        else {
            builder.add(event)
            builder.report(
                BuildProblem(
                    timeMicroseconds: event.timeMicroseconds,
                    message:
                        "undo ignored: no \(undone.verb) at \(UTCTime.format(microseconds: undone.timeMicroseconds)) "
                        + "in the minute before it"))
            return nil
        }
        let point = points[found]
        let after = since[(point.index + 1)...]
        points.removeSubrange(found...)
        builder = point.before
        let kept = builder.completedCount
        let rest = Array(after)
        since.removeSubrange(point.index...)
        for event in rest { build(event) }
        // The undo's own time moves the builder on as any event's does.
        builder.add(event)
        return kept
    }

    private mutating func forget(before time: Int64) {
        let stale = points.prefix { since[$0.index].timeMicroseconds < time }.count
        points.removeFirst(stale)
        let dropped = points.first?.index ?? since.count
        since.removeFirst(dropped)
        for index in points.indices { points[index].index -= dropped }
    }
}
