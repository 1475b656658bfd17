/// What a rider does to the workout being ridden, beside the ride's own controls; the journal keeps each one
/// (`player skip`, `player extend 60`, …) so that a replay rebuilds the same targets.
public enum PlayerControl: Equatable, Sendable {
    /// On to the next step.
    case skip
    /// Back to the start of this step, or, within its first `WorkoutPlayer.backRestartSeconds`, of the one before.
    case back
    /// The current step made longer (a timed step only).
    case extend(seconds: Int)
    /// Every target scaled, in % (100 is as written).
    case intensity(percent: Int)

    public static let intensityPercent = 50...150
    public static let extendSeconds = 1...3600

    /// The intensity `change` % from `percent`, held within `intensityPercent` (a control the journal can read back).
    public static func intensity(_ percent: Int, changedBy change: Int) -> PlayerControl {
        .intensity(percent: held(percent + change))
    }

    /// An intensity held within `intensityPercent`.
    static func held(_ percent: Int) -> Int {
        min(max(percent, intensityPercent.lowerBound), intensityPercent.upperBound)
    }

    /// `skip`, `back`, `extend 60`, `intensity 95`: the journal's words and the recorder's command.
    public var words: String {
        switch self {
        case .skip: "skip"
        case .back: "back"
        case .extend(let seconds): "extend \(seconds)"
        case .intensity(let percent): "intensity \(percent)"
        }
    }

    /// Reads `words`; nil for anything else, or a number outside its bounds.
    public init?(words: some StringProtocol) {
        let parts = words.split(separator: " ")
        switch (parts.first, parts.count) {
        case ("skip"?, 1): self = .skip
        case ("back"?, 1): self = .back
        case ("extend"?, 2):
            guard let seconds = Int(parts[1]), Self.extendSeconds.contains(seconds) else { return nil }
            self = .extend(seconds: seconds)
        case ("intensity"?, 2):
            guard let percent = Int(parts[1]), Self.intensityPercent.contains(percent) else { return nil }
            self = .intensity(percent: percent)
        default: return nil
        }
    }
}

/// A workout as ridden: the workout and the FTP its shares of FTP are taken of. The journal's `workout` line.
public struct PlannedWorkout: Equatable, Sendable {
    public var workout: StructuredWorkout
    public var ftpWatts: Int?

    public init(_ workout: StructuredWorkout, ftpWatts: Int?) {
        self.workout = workout
        self.ftpWatts = ftpWatts
    }
}

/// Where a ride is in its workout, and what it asks for now: a pure state machine moved by the ride's running
/// time (and distance), never by a clock of its own, so that the live recorder, a replay and the statistics of a
/// stored ride, fed the same seconds and controls, get the same targets. A pause holds the step: the player is
/// only moved by time on the timer.
public struct WorkoutPlayer: Sendable {
    public let planned: PlannedWorkout
    public private(set) var stepIndex = 0
    /// Running seconds spent in the current step.
    public private(set) var secondsInStep = 0.0
    /// Metres ridden in the current step (for a step that is a distance).
    public private(set) var metersInStep = 0.0
    /// Seconds the rider added to the current step.
    public private(set) var extraSeconds = 0
    public private(set) var intensityPercent = 100

    /// How far into a step `back` restarts it rather than going to the one before.
    public static let backRestartSeconds = 10.0

    public init(_ planned: PlannedWorkout, intensityPercent: Int = 100) {
        self.planned = planned
        self.intensityPercent = intensityPercent
    }

    public var steps: [WorkoutStep] { planned.workout.steps }
    public var isFinished: Bool { stepIndex >= steps.count }
    public var step: WorkoutStep? { isFinished ? nil : steps[stepIndex] }

    /// Seconds left in the current timed step (nil for an open or distance step, or when finished).
    public var secondsLeft: Double? {
        guard let step, case .seconds(let seconds) = step.length else { return nil }
        return max(0, Double(seconds + extraSeconds) - secondsInStep)
    }

    /// The step's share done, 0–1 (nil for an open step).
    private var progress: Double? {
        guard let step else { return nil }
        switch step.length {
        case .seconds(let seconds): return min(1, secondsInStep / Double(max(1, seconds + extraSeconds)))
        case .meters(let meters): return min(1, metersInStep / Double(max(1, meters)))
        case .open: return nil
        }
    }

    /// The power asked for now, in whole watts, after the intensity: a steady level, a range's midpoint, a ramp
    /// where the step has got to. Nil for a free ride, a maximal effort, when finished, or a share of FTP
    /// without an FTP.
    public var targetWatts: Int? { step.flatMap { watts($0.power, progress: progress ?? 0) } }

    /// The road's grade the step asks a trainer in simulation to ride, in %, when it has no power target.
    public var targetGradePercent: Double? {
        guard let step, targetWatts == nil, let grade = step.gradeHundredths else { return nil }
        return Double(grade) / 100
    }

    /// The range to show for a range target, in watts after the intensity.
    public var targetRangeWatts: ClosedRange<Int>? {
        guard let step, case .range(let low, let high) = step.power, let a = scaled(low), let b = scaled(high) else {
            return nil
        }
        return min(a, b)...max(a, b)
    }

    /// The next step's power at its start.
    public var nextTargetWatts: Int? {
        let next = stepIndex + 1
        guard next < steps.count else { return nil }
        return watts(steps[next].power, progress: 0)
    }

    /// A step's power `progress` of the way through it, in whole watts after the intensity.
    public func watts(_ power: PowerTarget, progress: Double) -> Int? {
        switch power {
        case .free, .maxEffort: return nil
        case .steady(let level): return scaled(level)
        case .range(let low, let high):
            guard let a = watts(of: low), let b = watts(of: high) else { return nil }
            return rounded((a + b) / 2)
        case .ramp(let from, let to):
            guard let a = watts(of: from), let b = watts(of: to) else { return nil }
            return rounded(a + (b - a) * progress)
        }
    }

    private func watts(of level: PowerLevel) -> Double? { level.watts(ftpWatts: planned.ftpWatts) }
    private func scaled(_ level: PowerLevel) -> Int? { watts(of: level).map(rounded) }
    private func rounded(_ watts: Double) -> Int { Int((watts * Double(intensityPercent) / 100).rounded()) }

    /// Moves on by `seconds` of running time and `meters` ridden in it, across as many steps as they finish.
    /// Returns the number of steps finished.
    @discardableResult
    public mutating func advance(seconds: Double, meters: Double = 0) -> Int {
        var seconds = max(0, seconds), meters = max(0, meters)
        var finished = 0
        while let step, seconds > 0 || meters > 0 {
            switch step.length {
            case .seconds(let length):
                let left = Double(length + extraSeconds) - secondsInStep
                if seconds < left {
                    secondsInStep += seconds
                    metersInStep += meters
                    return finished
                }
                // Distance is shared out in proportion to the time each step took of it.
                let share = seconds > 0 ? meters * left / seconds : 0
                seconds -= left
                meters -= share
            case .meters(let length):
                let left = Double(length) - metersInStep
                if meters < left {
                    secondsInStep += seconds
                    metersInStep += meters
                    return finished
                }
                let share = meters > 0 ? seconds * left / meters : 0
                meters -= left
                seconds -= share
            case .open:
                secondsInStep += seconds
                metersInStep += meters
                return finished
            }
            moveTo(stepIndex + 1)
            finished += 1
        }
        return finished
    }

    public mutating func apply(_ control: PlayerControl) {
        switch control {
        case .skip:
            if !isFinished { moveTo(stepIndex + 1) }
        case .back:
            let restart = secondsInStep > Self.backRestartSeconds || stepIndex == 0
            moveTo(restart ? min(stepIndex, steps.count - 1) : stepIndex - 1)
        case .extend(let seconds):
            if case .seconds? = step?.length { extraSeconds += seconds }
        case .intensity(let percent):
            intensityPercent = PlayerControl.held(percent)
        }
    }

    /// A lap press: it ends an open step (as a bike computer's "until lap"), and is only a lap otherwise.
    /// Returns whether the step changed.
    @discardableResult
    public mutating func lapPressed() -> Bool {
        guard case .open? = step?.length else { return false }
        moveTo(stepIndex + 1)
        return true
    }

    private mutating func moveTo(_ index: Int) {
        stepIndex = max(0, index)
        secondsInStep = 0
        metersInStep = 0
        extraSeconds = 0
    }
}
