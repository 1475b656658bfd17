/// The workout session's state machine: not started → running ⇄ paused → ended, or cancelled from any state
/// before the end. It records when each state began so that moving time and laps follow from it exactly.
public struct Session: Sendable {
    public enum State: String, Sendable {
        case notStarted
        case running
        case paused
        case ended
        case cancelled
    }

    public private(set) var state = State.notStarted
    public private(set) var plan = WorkoutPlan()
    public private(set) var startMicroseconds: Int64?
    public private(set) var endMicroseconds: Int64?
    /// Closed pause intervals, then the open one (end nil) while paused.
    public private(set) var pauses: [(start: Int64, end: Int64?)] = []
    /// The start of every lap after the first.
    public private(set) var lapStarts: [Int64] = []
    public private(set) var events: [WorkoutEvent] = []

    public init() {}

    /// Applies a control; returns why it was refused when it does not apply in the current state.
    @discardableResult
    public mutating func apply(_ control: WorkoutControl, at time: Int64) -> String? {
        switch (control, state) {
        case (.start(let plan), .notStarted):
            self.plan = plan
            startMicroseconds = time
            state = .running
        case (.pause, .running):
            pauses.append((time, nil))
            state = .paused
        case (.resume, .paused):
            pauses[pauses.count - 1].end = time
            state = .running
        case (.lap, .running), (.lap, .paused):
            lapStarts.append(time)
        case (.marker, .running), (.marker, .paused), (.intake, .running), (.intake, .paused):
            break
        case (.end, .running), (.end, .paused):
            close(at: time)
            state = .ended
        case (.cancel, .notStarted), (.cancel, .running), (.cancel, .paused):
            close(at: time)
            state = .cancelled
        default:
            return "\(control.name) ignored: the workout is \(state.rawValue)"
        }
        events.append(WorkoutEvent(timeMicroseconds: time, control: control))
        return nil
    }

    private mutating func close(at time: Int64) {
        if let last = pauses.indices.last, pauses[last].end == nil { pauses[last].end = time }
        endMicroseconds = time
    }

    /// Microseconds of [from, to) that fall in a pause (an open pause runs to `to`).
    public func pausedMicroseconds(from: Int64, to: Int64) -> Int64 {
        var total: Int64 = 0
        for pause in pauses {
            let start = max(pause.start, from)
            let end = min(pause.end ?? to, to)
            if end > start { total += end - start }
        }
        return total
    }
}

/// A control as it happened, for the workout's event list.
public struct WorkoutEvent: Equatable, Sendable {
    public var timeMicroseconds: Int64
    public var control: WorkoutControl

    public init(timeMicroseconds: Int64, control: WorkoutControl) {
        self.timeMicroseconds = timeMicroseconds
        self.control = control
    }

    /// A marker the automatic pause added (not the rider's).
    public var isAutoPauseMarker: Bool {
        control == .marker(AutoPause.pauseMarker) || control == .marker(AutoPause.resumeMarker)
    }

    /// What was drunk or eaten, for an intake.
    public var intake: Intake? {
        if case .intake(let intake) = control { intake } else { nil }
    }
}

extension Sequence<WorkoutEvent> {
    /// The water logged among these events; nil when none was.
    public var waterMillilitres: Double? {
        let drinks = compactMap { $0.intake?.kind == .water ? $0.intake?.amount : nil }
        return drinks.isEmpty ? nil : drinks.reduce(0, +)
    }
}
