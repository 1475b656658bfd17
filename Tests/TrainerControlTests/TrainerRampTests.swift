import CyclingSensors
import TestSupport
import Testing

@testable import TrainerControl

/// The rise rule: whatever path the asks take (the dashboard's keys held down, a script's D-Bus calls, the phone,
/// the workout's steps), no write raises ERG's target more than 100 W above what the trainer held 0.4 s before
/// (`Docs/guide/trainer.md`, "Big steps are ramped").
@Suite struct TrainerRampTests {
    /// A trainer that declares 0–750 W in 1 W steps.
    static let trainer = TrainerCapabilities(
        features: FitnessMachineFeature(targets: [.power, .resistance, .indoorBikeSimulation]),
        powerRange: SupportedRange(minimum: 0, maximum: 750, minimumIncrement: 1),
        resistanceRange: SupportedRange(minimum: 0, maximum: 200, minimumIncrement: 1))

    /// One write the trainer was sent, and when.
    struct Sent {
        var request: FitnessMachineRequest
        var at: Duration
    }

    /// A trainer that answers each write `answerDelay` after it, driven by asks and by the recorder's 0.5-s flush.
    struct Rig {
        var control: TrainerControl
        var sent: [Sent] = []
        var unanswered: (request: FitnessMachineRequest, at: Duration)?
        var answerDelay: Duration = .milliseconds(5)

        init(holding watts: Int) {
            control = TrainerControl(mode: .erg, targetWatts: watts)
            take(control.connected(TrainerRampTests.trainer, at: .zero), at: .zero)
            run(until: .seconds(1))
        }

        mutating func take(_ actions: [TrainerControl.Action], at time: Duration) {
            for case .write(let request) in actions {
                sent.append(Sent(request: request, at: time))
                unanswered = (request, time)
            }
        }

        /// Answers and flushes until `end`.
        mutating func run(until end: Duration) {
            var flush = (sent.last?.at ?? .zero)
            while true {
                let answerAt = unanswered.map { $0.at + answerDelay }
                let nextFlush = flush + .milliseconds(500)
                let next = min(answerAt ?? nextFlush, nextFlush)
                guard next <= end else { return }
                if let answerAt, answerAt <= nextFlush, let request = unanswered?.request {
                    unanswered = nil
                    take(control.indicated(answer(request.opCode), at: answerAt), at: answerAt)
                } else {
                    flush = nextFlush
                    take(control.tick(at: flush), at: flush)
                }
            }
        }

        mutating func ask(_ ask: TrainerAsk, at time: Duration) {
            if case .success(let actions) = control.ask(ask, at: time) { take(actions, at: time) }
        }
    }

    /// Every ERG write of a run of them (no reset, other mode or new link between) that raises the target keeps the
    /// rise rule: at most 100 W above the write before it, and above what the trainer held 0.4 s before it (the
    /// run's first target, when the run is younger).
    static func checkRises(_ sent: [Sent], sourceLocation: SourceLocation = #_sourceLocation) {
        var run: [(watts: Int, at: Duration)] = []
        for write in sent {
            switch write.request {
            case .setTargetPower(let watts):
                if let first = run.first, let previous = run.last, Int(watts) > previous.watts {
                    let before = run.last { $0.at <= write.at - .milliseconds(400) } ?? first
                    #expect(
                        Int(watts) - min(previous.watts, before.watts) <= 100,
                        "\(before.watts) W at \(before.at), then \(watts) W at \(write.at) after \(run)",
                        sourceLocation: sourceLocation)
                }
                #expect((0...750).contains(Int(watts)), sourceLocation: sourceLocation)
                run.append((Int(watts), write.at))
            case .setIndoorBikeSimulation, .setTargetResistanceLevel, .reset: run = []
            default: break
            }
        }
    }

    @Test func eightQuickAsksOfPlus100ClimbAStepAFlush() {
        // From a steady 100 W, eight asks of +100 W 3 ms apart (the staircase a script sent over D-Bus).
        var rig = Rig(holding: 100)
        #expect(rig.sent.last?.request == .setTargetPower(watts: 100))
        for index in 0..<8 { rig.ask(.powerChange(watts: 100), at: .seconds(2) + .milliseconds(3 * index)) }
        rig.run(until: .seconds(10))
        Self.checkRises(rig.sent)
        let watts = rig.sent.compactMap { sent -> Int? in
            if case .setTargetPower(let watts) = sent.request { return Int(watts) }
            return nil
        }
        // It still gets there: the rider's target, held within the trainer's 750 W.
        #expect(watts.last == 750)
        #expect(rig.control.targetWatts == 900)
        // Never 200 W and then 750 W: 100 W at most each time, a rise a flush (0.5 s) at most.
        #expect(watts.max() == 750)
        #expect(zip(watts, watts.dropFirst()).allSatisfy { $1 - $0 <= 100 })
        let rises = rig.sent.filter {
            if case .setTargetPower(let watts) = $0.request { return watts > 100 }
            return false
        }
        #expect(zip(rises, rises.dropFirst()).allSatisfy { $1.at - $0.at >= .milliseconds(400) })
    }

    @Test func oncePastItsFirstTargetERGClimbsAStepAFlush() {
        // ERG starts at its target (the trainer held none); a bigger one after it is climbed to.
        var rig = Rig(holding: 150)
        #expect(rig.sent.last?.request == .setTargetPower(watts: 150))
        rig.ask(.power(watts: 700), at: .seconds(2))
        #expect(rig.control.state(at: .seconds(2)) == .ramping)
        rig.run(until: .seconds(8))
        Self.checkRises(rig.sent)
        #expect(rig.sent.last?.request == .setTargetPower(watts: 700))
    }

    @Test func aLowerTargetIsNotHeldBackByTheRiseRule() throws {
        // 400 → 150 W: ramped down over 2 s as any big change is, each write lower than the one before.
        var rig = Rig(holding: 400)
        rig.ask(.power(watts: 150), at: .seconds(2))
        rig.run(until: .seconds(5))
        let down = rig.sent.filter { $0.at >= .seconds(2) }.compactMap { sent -> Int? in
            if case .setTargetPower(let watts) = sent.request { return Int(watts) }
            return nil
        }
        #expect(down.last == 150)
        #expect(zip(down, down.dropFirst()).allSatisfy { $1 < $0 })
        #expect(rig.sent.last.map { $0.at <= .seconds(4.5) } == true)
    }

    @Test func anyPathOfAsksKeepsTheRiseRule() {
        // Random asks from every kind (a target, +/−, another mode, free), at random moments, with the trainer
        // answering fast or slowly: the writes keep the rule in each of 300 sequences.
        var random = SplitMix64(seed: 53)
        for _ in 0..<300 {
            var rig = Rig(holding: Int.random(in: 0...400, using: &random))
            rig.answerDelay = .milliseconds(Int.random(in: 1...900, using: &random))
            var time = Duration.seconds(1)
            for _ in 0..<Int.random(in: 1...40, using: &random) {
                time += .milliseconds(Int.random(in: 0...700, using: &random))
                rig.run(until: time)
                let ask: TrainerAsk =
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<4: .powerChange(watts: Int.random(in: -200...400, using: &random))
                    case 4..<8: .power(watts: Int.random(in: 0...3000, using: &random))
                    case 8: .grade(percent: Double(Int.random(in: -5...10, using: &random)))
                    default: .mode(.free)
                    }
                if Int.random(in: 0..<6, using: &random) == 0 {
                    _ = rig.control.trainerPower(Double(Int.random(in: 0...500, using: &random)), at: time)
                }
                rig.ask(ask, at: time)
            }
            rig.run(until: time + .seconds(20))
            Self.checkRises(rig.sent)
        }
    }

    @Test func aNewRideBeginsERGAtTheStartingTargetNotTheLastRidesLoad() throws {
        // `record --target-watts 150` (the default): ride 1 ends at 333 W.
        var control = TrainerControl(targetWatts: 150)
        _ = control.connected(Self.trainer, at: .zero)
        _ = answerEvery(&control, try control.ask(.power(watts: 333), at: .seconds(1)).get(), at: .seconds(1))
        _ = answerEvery(&control, control.release(at: .seconds(60)), at: .seconds(60))
        // Ride 2 starts with control=erg and no target: 150 W, not 333 W.
        let written = answerEvery(&control, try control.ask(.mode(.erg), at: .seconds(120)).get(), at: .seconds(120))
        #expect(written == [.requestControl, .setTargetPower(watts: 150)])
        #expect(control.targetWatts == 150)
    }
}
