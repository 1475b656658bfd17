import StructuredWorkouts
import TrainerControl
import Workouts

/// The rider's actions of the ride being recorded that can still be taken back, and the undos done: which action an
/// undo names, whether it is still within its window, and how to put back what the journal alone does not (the
/// trainer's target, the workout player). Pure, as `SensorLink`: times come in as journal microseconds.
///
/// An action is numbered from 1 in its ride, so that a screen that offers "Undo lap 4" undoes that action and no
/// other: two screens pressing Undo at once undo it once, and the second is told it was already undone.
struct UndoLedger: Sendable {
    /// How long an action can be undone (App Intents' undo, a phone's Undo button): 30 s.
    static let windowMicroseconds: Int64 = 30_000_000

    struct Entry: Sendable {
        var id: Int64
        /// The action's journal line, as an `undo` names it.
        var action: UndoneAction
        /// As the screens offer it: "lap 4", "pause", "ERG 300 W", "water 250ml", "skip".
        var words: String
        /// The type a screen needs to have been granted to take it back.
        var type: DataType
        /// For a trainer action: what the trainer was asked before it, asked again when it is undone.
        var trainerBefore: TrainerAsk?
        /// For an action that moved the workout's player (its controls, a lap press): the player before it.
        var guideBefore: WorkoutGuide?
        var undone = false
    }

    private(set) var entries: [Entry] = []
    private var nextId: Int64 = 1

    /// A new ride: nothing to undo.
    mutating func reset() {
        entries.removeAll()
    }

    /// An action taken: it can be undone for the window from its time.
    @discardableResult
    mutating func took(
        _ action: UndoneAction, words: String, type: DataType = .ride, trainerBefore: TrainerAsk? = nil,
        guideBefore: WorkoutGuide? = nil
    ) -> Int64 {
        let id = nextId
        nextId += 1
        entries.removeAll { $0.action.timeMicroseconds < action.timeMicroseconds - Self.windowMicroseconds }
        entries.append(
            Entry(
                id: id, action: action, words: words, type: type, trainerBefore: trainerBefore,
                guideBefore: guideBefore))
        return id
    }

    /// The action an undo now takes back (`id`, or the latest not undone), or why none is taken, in words.
    func entry(_ id: Int64?, at now: Int64) -> Result<Entry, Refusal> {
        let found: Entry?
        if let id {
            found = entries.first { $0.id == id }
            guard let found else { return .failure(.init("there is no action \(id) to undo in this ride")) }
            if found.undone { return .failure(.init("\(found.words) was already undone")) }
        } else {
            found = entries.last { !$0.undone }
            guard found != nil else { return .failure(.init("there is nothing to undo")) }
        }
        guard let found else { return .failure(.init("there is nothing to undo")) }
        let age = now - found.action.timeMicroseconds
        guard age <= Self.windowMicroseconds else {
            return .failure(
                .init(
                    "\(found.words) was \(age / 1_000_000) s ago: an action can be undone for "
                        + "\(Self.windowMicroseconds / 1_000_000) s"))
        }
        return .success(found)
    }

    mutating func markUndone(_ id: Int64) {
        if let index = entries.firstIndex(where: { $0.id == id }) { entries[index].undone = true }
    }

    /// The first action after `id`, not undone, that `matches`: one that moved the workout's player too (the
    /// snapshot before `id` is then out of date) or asked the trainer too (what it asked stands over the target
    /// before `id`'s).
    func laterAction(after id: Int64, where matches: (Entry) -> Bool) -> Entry? {
        entries.first { $0.id > id && !$0.undone && matches($0) }
    }

    /// Whether an action moved the workout's player (it kept the player as it was before).
    static func movedThePlayer(_ entry: Entry) -> Bool { entry.guideBefore != nil }

    /// What the screens offer: the latest action that can still be undone at `now`, and the seconds left.
    func offer(at now: Int64) -> (entry: Entry, secondsLeft: Double)? {
        guard let latest = entries.last(where: { !$0.undone }) else { return nil }
        let left = latest.action.timeMicroseconds + Self.windowMicroseconds - now
        guard left > 0 else { return nil }
        return (latest, (Double(left) / 1e6).rounded(.up))
    }

    struct Refusal: Error, Sendable {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

extension TrainerControl {
    /// The rider's ask that gives the mode and target as they are: what an undone trainer action asks again.
    var currentAsk: TrainerAsk {
        switch mode {
        case .erg: .power(watts: targetWatts)
        case .simulation: .grade(percent: gradePercent)
        case .resistance: .resistance(percent: resistancePercent)
        case .free: .mode(.free)
        }
    }
}

extension TrainerAsk {
    /// As a screen offers to undo it: "ERG 300 W", "grade 4 %", "resistance 30 %", "trainer free".
    var words: String {
        switch self {
        case .power(let watts): "ERG \(watts) W"
        case .powerChange(let watts): "ERG \(watts >= 0 ? "+" : "")\(watts) W"
        case .grade(let percent): "grade \(Self.number(percent)) %"
        case .resistance(let percent): "resistance \(Self.number(percent)) %"
        case .mode(let mode): "trainer \(mode.rawValue)"
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
    }
}

extension PlayerControl {
    /// As a screen offers to undo it: "skip", "back", "extend 60 s", "intensity 95 %".
    var shownWords: String {
        switch self {
        case .skip: "skip"
        case .back: "back"
        case .extend(let seconds): "extend \(seconds) s"
        case .intensity(let percent): "intensity \(percent) %"
        }
    }
}
