import Concurrency
import CyclingSensors

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a rider asks of the trainer: a mode, or a target (which also chooses its mode).
public enum TrainerAsk: Equatable, Sendable {
    case mode(TrainerMode)
    /// ERG at this many watts.
    case power(watts: Int)
    /// ERG at the current target plus this many watts (the dashboard's +/−).
    case powerChange(watts: Int)
    /// Simulation at this grade, in %.
    case grade(percent: Double)
    /// Resistance at this share of the trainer's declared range, in %.
    case resistance(percent: Double)
}

/// Where the control of the trainer stands, as `status` and the screens show it.
public enum TrainerState: String, Sendable {
    /// No trainer with a Fitness Machine control point is connected, nor was.
    case absent
    /// The trainer was connected and is not now: its mode and target are sent again when it is back.
    case disconnected
    /// Not steered: free mode.
    case free
    /// Request Control sent, no answer yet.
    case asking
    /// cyclelog holds control and the trainer took the target.
    case controlled
    /// A target on its way over a ramp (a big step, or back from recovery).
    case ramping
    /// ERG eased to the recovery level: the cadence fell.
    case recovering
    /// The trainer refused control or a target: `message` says why.
    case refused
}

/// The control of one smart trainer through its Fitness Machine Control Point, as a pure state machine with the
/// time passed in: what the rider asks, the trainer's answers and the ride's readings come in; out come the
/// writes to make and what to tell the rider.
///
/// It reconciles rather than queues: it holds what the rider wants (a mode and its target), works out what the
/// trainer should be told now (through the ramp, the cadence safety and the power match, held within what the
/// trainer declares) and writes it when it differs from what the trainer last took. One write is outstanding at
/// a time, its answer matched by op code; quick changes in a row therefore become one write, and a trainer that
/// reconnects is told its mode and target again without anyone asking.
public struct TrainerControl: Sendable {
    public enum Action: Equatable, Sendable {
        /// Write this request to the control point (and journal it).
        case write(FitnessMachineRequest)
        /// Tell the rider.
        case tell(String)
    }

    public private(set) var rules: TrainerRules
    public private(set) var mode: TrainerMode
    /// The rider's ERG target, in watts (before the ramp, the safety and the power match).
    public private(set) var targetWatts: Int
    public private(set) var gradePercent: Double = 0
    public private(set) var resistancePercent: Double = 0
    /// The trainer's answer words since the last success, shown until control is held again.
    public private(set) var message: String?

    private var capabilities: TrainerCapabilities?
    private var everConnected = false
    private var control = Control.none
    /// The write on its way or awaiting its answer; `takenAt` is when the trainer took it (nil until then).
    private var pending: (request: FitnessMachineRequest, takenAt: Duration?)?
    /// The same request sent again in a row (no answer, or control refused): the count so far.
    private var tries: (request: FitnessMachineRequest, count: Int)?
    /// No write before this time (a pause between retries, or after the rider was told).
    private var notBefore: Duration = .zero
    /// The target request the trainer last took.
    private var applied: FitnessMachineRequest?
    /// A target the trainer refused: not sent again until the target changes.
    private var refused: FitnessMachineRequest?
    private var controlRefusalTold = false
    private var ramp: Ramp
    /// The ERG targets the trainer was sent within the last `riseSpacing`, and the one before them, newest last:
    /// the last is what it holds, and every rise is measured from what it held `riseSpacing` ago, whatever path
    /// the asks took. Empty when it holds no ERG target (free, another mode, a reset, a new link).
    private var ergWrites: [(watts: Int, at: Duration)] = []
    /// The target a new ride's ERG begins at (`record --target-watts`): the end of a ride forgets the last one.
    private let startingWatts: Int
    private var recovering = false
    private var lowCadenceSince: Duration?
    private var cadence: (rpm: Double, at: Duration)?
    private var meter: (watts: Double, at: Duration)?
    private var trainerPowerAt: Duration?
    private var averageOffsetWatts = 0.0
    private var matchFrozenUntil: Duration = .zero
    private var noMeterTold = false

    private enum Control: Equatable {
        case none, asking, held
    }

    /// A linear change of the ERG target from `from` to `to` over `length` from `start`.
    private struct Ramp: Equatable {
        var from: Double
        var to: Double
        var start: Duration
        var length: Duration

        static func at(_ watts: Double) -> Ramp { Ramp(from: watts, to: watts, start: .zero, length: .zero) }

        func watts(at time: Duration) -> Double {
            guard length > .zero, time < start + length else { return to }
            let share = max(0, (time - start).seconds / length.seconds)
            return from + (to - from) * share
        }

        func isRunning(at time: Duration) -> Bool { length > .zero && time < start + length && from != to }
    }

    public init(rules: TrainerRules = TrainerRules(), mode: TrainerMode = .free, targetWatts: Int = 150) {
        self.rules = rules
        self.mode = mode
        self.targetWatts = min(max(0, targetWatts), Self.maximumTargetWatts)
        startingWatts = self.targetWatts
        ramp = .at(Double(self.targetWatts))
    }

    // MARK: The trainer

    /// The trainer's control point is subscribed (after every connection): control is asked for, then the mode
    /// and target are sent. That is a change of the target the trainer holds, so the power match's average is
    /// frozen while it settles, as after a rider's change (and the first target is the rider's own).
    public mutating func connected(_ capabilities: TrainerCapabilities, at time: Duration) -> [Action] {
        self.capabilities = capabilities
        everConnected = true
        control = .none
        pending = nil
        tries = nil
        applied = nil
        refused = nil
        notBefore = .zero
        matchFrozenUntil = time + rules.matchFreeze
        var actions: [Action] = []
        if let refusal = capabilities.refusal(of: mode) {
            actions.append(tell(refusal + ": it stays free"))
            mode = .free
        }
        return actions + next(at: time)
    }

    /// The trainer's link went down; nothing is written until it is back.
    public mutating func disconnected() {
        capabilities = nil
        control = .none
        pending = nil
        tries = nil
        applied = nil
        ergWrites = []
    }

    /// An indication of the control point: the answer to the outstanding write, matched by its op code.
    public mutating func indicated(_ bytes: [UInt8], at time: Duration) -> [Action] {
        guard let message = try? FitnessMachineControlPoint(decoding: bytes).message, let result = message.result,
            let sent = pending, sent.request.opCode == message.opCode
        else { return [] }
        pending = nil
        if result == .success { return succeeded(sent.request, at: time) + next(at: time) }
        return refusedAnswer(sent.request, result, at: time) + next(at: time)
    }

    /// A Fitness Machine Status notification: the trainer took control back, or was reset or stopped.
    public mutating func status(_ bytes: [UInt8], at time: Duration) -> [Action] {
        guard let opCode = bytes.first, control != .none || applied != nil else { return [] }
        typealias OpCode = FitnessMachineStatus.OpCode
        switch opCode {
        case OpCode.controlPermissionLost:
            control = .none
            applied = nil
            return [tell("the trainer took control back (another app asked for it): asking for it again")]
                + next(at: time)
        case OpCode.reset:
            control = .none
            applied = nil
            return next(at: time)
        case OpCode.stoppedBySafetyKey:
            return [tell("the trainer stopped: its safety key was pulled")]
        default:
            return []
        }
    }

    /// The write of `request` failed on the bus (an ATT error, a dropped link): said, and tried again as an
    /// unanswered write is.
    public mutating func writeFailed(_ request: FitnessMachineRequest, reason: String, at time: Duration) -> [Action] {
        guard pending?.request == request else { return [] }
        pending = nil
        return retryOrGiveUp(request, at: time, why: "the write of \(request) failed (\(reason))")
    }

    // MARK: The rider

    /// Why `ask` would be refused now, or nil.
    public func refusal(of ask: TrainerAsk) -> String? {
        guard everConnected else {
            return "no smart trainer is connected (none with a Fitness Machine control point)"
        }
        let wanted = Self.mode(of: ask)
        if let capabilities, let refusal = capabilities.refusal(of: wanted) { return refusal }
        if case .powerChange = ask, mode != .erg { return "the trainer is not in ERG: set a target power first" }
        return nil
    }

    /// Takes what the rider asks, or says why not (a mode the trainer's features do not list is never sent).
    public mutating func ask(_ ask: TrainerAsk, at time: Duration) -> Result<[Action], TrainerRefusal> {
        if let refusal = refusal(of: ask) { return .failure(TrainerRefusal(reason: refusal)) }
        // A big change is ramped from what the trainer holds (its last write), not from the previous ask: asks in a
        // quick row, each within a step of the one before, are one big change.
        let current = ergWrites.last.map { Double($0.watts) + (powerMatchOffsetWatts ?? 0) } ?? effectiveWatts(at: time)
        let wasERG = mode == .erg
        mode = Self.mode(of: ask)
        switch ask {
        case .mode: break
        case .power(let watts): setTarget(watts, from: wasERG ? current : nil, at: time)
        case .powerChange(let watts): setTarget(targetWatts + watts, from: current, at: time)
        case .grade(let percent): gradePercent = percent
        case .resistance(let percent): resistancePercent = min(max(percent, 0), 100)
        }
        if !wasERG, mode == .erg {
            recovering = false
            lowCadenceSince = nil
            ramp = .at(Double(targetWatts))
            matchFrozenUntil = time + rules.matchFreeze
        }
        refused = nil
        var actions: [Action] = []
        if mode == .erg, rules.powerFromMeter, !noMeterTold, !meterIsFresh(at: time) {
            noMeterTold = true
            actions.append(.tell("power match: no power meter is sending, so ERG steers by the trainer's own power"))
        }
        return .success(actions + next(at: time))
    }

    /// Whether ERG steers by a power meter (a start's `powerFrom=`).
    public mutating func steer(byMeter: Bool) {
        rules.powerFromMeter = byMeter
        noMeterTold = false
    }

    /// Lets the trainer go (end, cancel, SIGTERM, the service's stop): a Reset, when cyclelog holds it.
    public mutating func release(at time: Duration) -> [Action] {
        mode = .free
        targetWatts = startingWatts
        ramp = .at(Double(startingWatts))
        guard control != .none || applied != nil else { return [] }
        pending = nil
        control = .none
        applied = nil
        ergWrites = []
        return [.write(.reset)]
    }

    // MARK: The ride's readings

    /// The rider's cadence (any sensor's best).
    public mutating func cadence(_ rpm: Double, at time: Duration) -> [Action] {
        cadence = (rpm, time)
        return next(at: time)
    }

    /// A crank or pedal power meter's power.
    public mutating func meterPower(_ watts: Double, at time: Duration) {
        meter = (watts, time)
    }

    /// The trainer's own power: with a fresh meter reading, one step of the power match's average.
    public mutating func trainerPower(_ watts: Double, at time: Duration) -> [Action] {
        defer { trainerPowerAt = time }
        guard rules.powerFromMeter, mode == .erg, let meter, time - meter.at <= rules.matchPairing,
            time >= matchFrozenUntil
        else { return [] }
        let step = trainerPowerAt.map { min(time - $0, rules.matchTimeConstant) } ?? .seconds(1)
        let weight = 1 - exp(-step.seconds / rules.matchTimeConstant.seconds)
        averageOffsetWatts += weight * ((meter.watts - watts) - averageOffsetWatts)
        return next(at: time)
    }

    /// The trainer took the write of `request` (BlueZ's WriteValue returned: the ATT Write Response came): its
    /// answer is awaited from now. The time the write spent on its way (a busy radio, retransmissions) is not the
    /// trainer's to answer for, and a write that never arrives fails on the bus instead (`writeFailed`).
    public mutating func written(_ request: FitnessMachineRequest, at time: Duration) {
        guard let sent = pending, sent.request == request, sent.takenAt == nil else { return }
        pending = (request, time)
    }

    /// The time goes on: an unanswered write times out, a ramp moves, the cadence safety looks again.
    public mutating func tick(at time: Duration) -> [Action] {
        var actions: [Action] = []
        if let sent = pending, let takenAt = sent.takenAt, time - takenAt >= rules.answerTimeout {
            pending = nil
            actions += retryOrGiveUp(
                sent.request, at: time,
                why: "the trainer did not answer \(sent.request) within \(rules.answerTimeout.seconds.formatted1) s")
        }
        return actions + next(at: time)
    }

    // MARK: What is shown

    /// The offset power match applies now (meter − trainer, held within its limit), or nil when it is off.
    public var powerMatchOffsetWatts: Double? {
        guard rules.powerFromMeter, meter != nil else { return nil }
        return min(max(averageOffsetWatts, -rules.matchLimitWatts), rules.matchLimitWatts)
    }

    public func state(at time: Duration) -> TrainerState {
        guard everConnected else { return .absent }
        guard capabilities != nil else { return .disconnected }
        if mode == .free { return control == .held ? .controlled : .free }
        switch control {
        case .none, .asking: return message != nil ? .refused : .asking
        case .held:
            if refused != nil { return .refused }
            if mode == .erg, recovering { return .recovering }
            if mode == .erg, ramp.isRunning(at: time) || isRiseHeld(at: time) { return .ramping }
            return .controlled
        }
    }

    /// The power the trainer is being told now, before the power match.
    public func effectiveWatts(at time: Duration) -> Double {
        recovering ? recoveryWatts : ramp.watts(at: time)
    }

    // MARK: Working it out

    private static func mode(of ask: TrainerAsk) -> TrainerMode {
        switch ask {
        case .mode(let mode): mode
        case .power, .powerChange: .erg
        case .grade: .simulation
        case .resistance: .resistance
        }
    }

    private var recoveryWatts: Double {
        min(Double(targetWatts) * rules.recoveryShare, Double(rules.recoveryWatts))
    }

    /// The highest target a rider can ask for (what D-Bus takes and the journal's `trainer erg` line reads), however
    /// often +10 W is pressed; the trainer's own range holds what is sent within less.
    public static let maximumTargetWatts = 3000

    private mutating func setTarget(_ watts: Int, from current: Double?, at time: Duration) {
        let watts = min(max(0, watts), Self.maximumTargetWatts)
        targetWatts = watts
        matchFrozenUntil = time + rules.matchFreeze
        guard let current, !recovering, abs(Double(watts) - current) > Double(rules.bigStepWatts) else {
            ramp = .at(Double(watts))
            return
        }
        ramp = Ramp(from: current, to: Double(watts), start: time, length: rules.bigStepRamp)
    }

    private func meterIsFresh(at time: Duration) -> Bool {
        guard let meter else { return false }
        return time - meter.at <= rules.staleReading
    }

    /// The cadence safety's look at the latest cadence (a silent cadence counts as 0 once it was seen).
    private mutating func watchCadence(at time: Duration) -> [Action] {
        guard mode == .erg, let cadence else { return [] }
        let rpm = time - cadence.at > rules.staleReading ? 0 : cadence.rpm
        if recovering {
            guard rpm > rules.recoveredCadenceRPM else { return [] }
            recovering = false
            ramp = Ramp(from: recoveryWatts, to: Double(targetWatts), start: time, length: rules.rampBack)
            matchFrozenUntil = time + rules.matchFreeze
            return [
                .tell(
                    "cadence back above \(Int(rules.recoveredCadenceRPM)) rpm: ERG returns to \(targetWatts) W "
                        + "over \(Int(rules.rampBack.seconds)) s")
            ]
        }
        guard rpm < rules.lowCadenceRPM else {
            lowCadenceSince = nil
            return []
        }
        let since = lowCadenceSince ?? time
        lowCadenceSince = since
        guard time - since >= rules.lowCadenceDuration else { return [] }
        recovering = true
        lowCadenceSince = nil
        matchFrozenUntil = time + rules.matchFreeze
        return [
            .tell(
                "cadence under \(Int(rules.lowCadenceRPM)) rpm for \(Int(rules.lowCadenceDuration.seconds)) s: ERG "
                    + "eased to \(Int(recoveryWatts)) W until you pedal above \(Int(rules.recoveredCadenceRPM)) rpm")
        ]
    }

    /// The target request the trainer should hold now, held within what it declares.
    private func wanted(at time: Duration, _ capabilities: TrainerCapabilities) -> FitnessMachineRequest? {
        switch mode {
        case .free: return nil
        case .erg:
            return .setTargetPower(watts: ergWatts(at: time, capabilities).watts)
        case .simulation:
            var simulation = IndoorBikeSimulation(gradePercent: gradePercent)
            simulation.gradeHundredthsOfPercent = capabilities.gradeHundredths(percent: gradePercent)
            return .setIndoorBikeSimulation(simulation)
        case .resistance:
            return .setTargetResistanceLevel(tenths: capabilities.resistanceTenths(percent: resistancePercent))
        }
    }

    /// The ERG target to send now, and whether the rise rule holds it below what the ramp asks: no write raises
    /// the target more than `bigStepWatts` above what the trainer holds, nor above what it held `riseSpacing`
    /// before. Lower targets are not held back (the cadence safety eases at once); a trainer that holds no ERG
    /// target (free, another mode, a new link) is sent the target at once, as ERG starts.
    private func ergWatts(at time: Duration, _ capabilities: TrainerCapabilities) -> (watts: Int16, held: Bool) {
        let asked = capabilities.power(Int((effectiveWatts(at: time) - (powerMatchOffsetWatts ?? 0)).rounded()))
        guard let held = ergWrites.last, Int(asked) > held.watts else { return (asked, false) }
        let before = ergWrites.last(where: { $0.at <= time - rules.riseSpacing }) ?? ergWrites[0]
        let from = min(held.watts, before.watts)
        let limit = from + max(rules.bigStepWatts, capabilities.powerIncrement)
        guard Int(asked) > limit else { return (asked, false) }
        return (capabilities.power(atMost: limit), true)
    }

    private func isRiseHeld(at time: Duration) -> Bool {
        guard let capabilities, mode == .erg, !recovering else { return false }
        return ergWatts(at: time, capabilities).held
    }

    /// The next write, if one is due and none is outstanding.
    private mutating func next(at time: Duration) -> [Action] {
        var actions = watchCadence(at: time)
        guard let capabilities, pending == nil, time >= notBefore else { return actions }
        if mode == .free {
            // Free: a trainer we hold is let go; one we do not hold is left alone.
            if control == .held { actions += send(.reset, at: time) }
            return actions
        }
        switch control {
        case .none:
            control = .asking
            actions += send(.requestControl, at: time)
        case .asking:
            break
        case .held:
            guard let wanted = wanted(at: time, capabilities), wanted != applied, wanted != refused else { break }
            actions += send(wanted, at: time)
        }
        return actions
    }

    private mutating func send(_ request: FitnessMachineRequest, at time: Duration) -> [Action] {
        pending = (request, nil)
        switch request {
        case .setTargetPower(let watts):
            ergWrites.append((Int(watts), time))
            // Only the writes of the last `riseSpacing` and the one before them are ever measured from.
            while ergWrites.count > 1, ergWrites[1].at <= time - rules.riseSpacing { ergWrites.removeFirst() }
        case .setIndoorBikeSimulation, .setTargetResistanceLevel, .reset: ergWrites = []
        default: break
        }
        tries = (request, tries?.request == request ? (tries?.count ?? 0) + 1 : 1)
        return [.write(request)]
    }

    private mutating func succeeded(_ request: FitnessMachineRequest, at time: Duration) -> [Action] {
        tries = nil
        switch request {
        case .requestControl:
            control = .held
            controlRefusalTold = false
            message = nil
        case .reset:
            control = .none
            applied = nil
        case .setTargetPower, .setIndoorBikeSimulation, .setTargetResistanceLevel:
            applied = request
            message = nil
        case .startOrResume, .stopOrPause, .spinDownControl:
            break
        }
        return []
    }

    private mutating func refusedAnswer(
        _ request: FitnessMachineRequest, _ result: ControlPointResult, at time: Duration
    ) -> [Action] {
        let words =
            FitnessMachineControlPoint.refusal(result, to: request.opCode) ?? "the trainer refused \(request)"
        switch (request, result) {
        case (.requestControl, _):
            control = .none
            if let tries, tries.count <= rules.retries {
                notBefore = time + rules.answerTimeout
                return []
            }
            tries = nil
            notBefore = time + rules.retryPause
            message = words
            guard !controlRefusalTold else { return [] }
            controlRefusalTold = true
            return [.tell(words)]
        case (_, .controlNotPermitted):
            // The trainer no longer counts cyclelog as in control: ask again (Request Control), then resend.
            control = .none
            applied = nil
            return [.tell(words + ": asking for control again")]
        case (.reset, _):
            control = .none
            applied = nil
            return [tell(words)]
        default:
            refused = request
            tries = nil
            return [tell(words + " (\(request))")]
        }
    }

    private mutating func retryOrGiveUp(_ request: FitnessMachineRequest, at time: Duration, why: String) -> [Action] {
        // Control is asked for again whether this was a retry or the last try.
        if request == .requestControl { control = .none }
        if let tries, tries.request == request, tries.count <= rules.retries { return [] }
        tries = nil
        notBefore = time + rules.retryPause
        let count = rules.retries + 1
        return [tell("\(why) (\(count) tries); trying again in \(Int(rules.retryPause.seconds)) s")]
    }

    private mutating func tell(_ words: String) -> Action {
        message = words
        return .tell(words)
    }
}

/// Why the trainer's control refused what the rider asked.
public struct TrainerRefusal: Error, Equatable, Sendable {
    public var reason: String
    public init(reason: String) { self.reason = reason }
}

extension Double {
    /// One decimal place at most ("1", "0.5").
    var formatted1: String {
        let tenths = (self * 10).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(tenths / 10)
    }
}
