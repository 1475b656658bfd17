import CyclingSensors
import Testing

@testable import TrainerControl

/// A trainer that takes ERG, simulation and resistance, 0–1500 W in 1 W steps, resistance 0–20.0 in 0.1 steps.
let fullTrainer = TrainerCapabilities(
    features: FitnessMachineFeature(targets: [.power, .resistance, .indoorBikeSimulation]),
    powerRange: SupportedRange(minimum: 0, maximum: 1500, minimumIncrement: 1),
    resistanceRange: SupportedRange(minimum: 0, maximum: 200, minimumIncrement: 1))

/// The trainer's answer to `opCode`: `80 op result`.
func answer(_ opCode: UInt8, _ result: ControlPointResult = .success) -> [UInt8] {
    FitnessMachineControlPoint.response(to: opCode, result: result)
}

func seconds(_ value: Double) -> Duration { .milliseconds(Int(value * 1000)) }

/// The writes among some actions.
func writes(_ actions: [TrainerControl.Action]) -> [FitnessMachineRequest] {
    actions.compactMap {
        if case .write(let request) = $0 { return request }
        return nil
    }
}

/// Answers every write with success, and the writes those answers set off, in order; returns them all.
func answerEvery(
    _ control: inout TrainerControl, _ actions: [TrainerControl.Action], at time: Duration
) -> [FitnessMachineRequest] {
    var written: [FitnessMachineRequest] = []
    var queue = writes(actions)
    while let request = queue.first {
        queue.removeFirst()
        written.append(request)
        queue += writes(control.indicated(answer(request.opCode), at: time))
    }
    return written
}

func told(_ actions: [TrainerControl.Action]) -> [String] {
    actions.compactMap {
        if case .tell(let words) = $0 { return words }
        return nil
    }
}

/// A control that holds the trainer in ERG at `watts`, at time 0.
func ergControl(_ watts: Int, rules: TrainerRules = TrainerRules()) -> TrainerControl {
    var control = TrainerControl(rules: rules, mode: .erg, targetWatts: watts)
    _ = control.connected(fullTrainer, at: .zero)
    _ = control.indicated(answer(0x00), at: .zero)
    _ = control.indicated(answer(0x05), at: .zero)
    return control
}

@Suite struct TrainerControlTests {
    @Test func controlIsAskedForThenTheModeAndTargetAreSent() throws {
        var control = TrainerControl(mode: .erg, targetWatts: 200)
        #expect(control.state(at: .zero) == .absent)
        #expect(writes(control.connected(fullTrainer, at: .zero)) == [.requestControl])
        #expect(control.state(at: .zero) == .asking)
        // An answer to another op code is not this write's.
        #expect(control.indicated(answer(0x05), at: seconds(0.1)).isEmpty)
        #expect(writes(control.indicated(answer(0x00), at: seconds(0.2))) == [.setTargetPower(watts: 200)])
        #expect(writes(control.indicated(answer(0x05), at: seconds(0.3))).isEmpty)
        #expect(control.state(at: seconds(0.3)) == .controlled)
    }

    @Test func oneWriteIsOutstandingAndQuickChangesBecomeOne() throws {
        var control = ergControl(200)
        #expect(writes(try control.ask(.powerChange(watts: 10), at: seconds(1)).get()) == [.setTargetPower(watts: 210)])
        // Two more presses while the first is unanswered: nothing written yet.
        #expect(writes(try control.ask(.powerChange(watts: 10), at: seconds(1.1)).get()).isEmpty)
        #expect(writes(try control.ask(.powerChange(watts: 10), at: seconds(1.2)).get()).isEmpty)
        // The answer comes: the newest target, once.
        #expect(writes(control.indicated(answer(0x05), at: seconds(1.3))) == [.setTargetPower(watts: 230)])
    }

    @Test func anUnansweredWriteIsSentThreeTimesMoreThenTheRiderIsTold() throws {
        var control = TrainerControl(mode: .erg, targetWatts: 200)
        // Each write is taken by the trainer as it is sent (its ATT Write Response), then never answered.
        for request in writes(control.connected(fullTrainer, at: .zero)) { control.written(request, at: .zero) }
        var sent = 1
        var words: [String] = []
        for tenth in 1...60 {
            let time = seconds(Double(tenth) / 10)
            let actions = control.tick(at: time)
            for request in writes(actions) { control.written(request, at: time) }
            sent += writes(actions).count
            words += told(actions)
        }
        // 0 s, then at 1, 2 and 3 s; told at 4 s; nothing more until the pause of 10 s is over.
        #expect(sent == 4)
        #expect(words.count == 1)
        #expect(words.first?.contains("did not answer Request Control within 1 s (4 tries)") == true)
        #expect(writes(control.tick(at: seconds(14))) == [.requestControl])
    }

    @Test func theAnswerIsAwaitedFromWhenTheTrainerTookTheWrite() throws {
        var control = TrainerControl(mode: .erg, targetWatts: 200)
        #expect(writes(control.connected(fullTrainer, at: .zero)) == [.requestControl])
        // A write on its way for 5 s (a busy radio): not the trainer's silence, so never sent again meanwhile.
        for tenth in 1...50 { #expect(writes(control.tick(at: seconds(Double(tenth) / 10))).isEmpty) }
        control.written(.requestControl, at: seconds(5))
        // Taken at 5 s: the answer is awaited for the rules' 1 s from then, and one that comes within it is taken.
        #expect(writes(control.tick(at: seconds(5.9))).isEmpty)
        #expect(writes(control.indicated(answer(0x00), at: seconds(5.95))) == [.setTargetPower(watts: 200)])
        // The next write, taken at once and unanswered for the 1 s: sent again.
        control.written(.setTargetPower(watts: 200), at: seconds(6))
        #expect(writes(control.tick(at: seconds(6.9))).isEmpty)
        #expect(writes(control.tick(at: seconds(7))) == [.setTargetPower(watts: 200)])
        // A late taking of a write that is no longer the one awaited changes nothing.
        control.written(.requestControl, at: seconds(7.1))
        #expect(writes(control.tick(at: seconds(7.5))).isEmpty)
    }

    @Test func controlRefusedIsRetriedThenSaidOnceInWords() throws {
        var control = TrainerControl(mode: .erg, targetWatts: 200)
        _ = control.connected(fullTrainer, at: .zero)
        var words: [String] = []
        var sent = 1
        for second in 0..<4 {
            words += told(control.indicated(answer(0x00, .controlNotPermitted), at: seconds(Double(second) + 0.1)))
            sent += writes(control.tick(at: seconds(Double(second) + 1.1))).count
        }
        #expect(sent == 4)
        #expect(words == ["the trainer refused control: another app holds it — close Zwift or the trainer's own app"])
        #expect(control.state(at: seconds(5)) == .refused)
        #expect(control.message == words.first)
        // Asked again after the pause; refused again, not said again; the rider closes the other app and it works.
        #expect(writes(control.tick(at: seconds(13.2))) == [.requestControl])
        for second in 0..<4 {
            #expect(
                told(control.indicated(answer(0x00, .controlNotPermitted), at: seconds(13.3 + Double(second)))).isEmpty)
            _ = control.tick(at: seconds(14.3 + Double(second)))
        }
        _ = control.tick(at: seconds(30))
        #expect(writes(control.indicated(answer(0x00), at: seconds(30.1))) == [.setTargetPower(watts: 200)])
        #expect(control.message == nil)
    }

    @Test func aModeTheFeaturesDoNotListIsRefusedAndNeverSent() throws {
        let resistanceOnly = TrainerCapabilities(
            features: FitnessMachineFeature(targets: [.resistance]),
            resistanceRange: SupportedRange(minimum: 0, maximum: 100, minimumIncrement: 1))
        var control = TrainerControl()
        _ = control.connected(resistanceOnly, at: .zero)
        guard case .failure(let refusal) = control.ask(.power(watts: 250), at: seconds(1)) else {
            Issue.record("ERG was taken by a resistance-only trainer")
            return
        }
        #expect(
            refusal.reason
                == "the trainer does not take ERG (its features do not list it; it takes resistance)")
        #expect(control.mode == .free)
        // Resistance is taken: control, then 40 % of 0–10.0 = 4.0.
        #expect(writes(try control.ask(.resistance(percent: 40), at: seconds(2)).get()) == [.requestControl])
        #expect(writes(control.indicated(answer(0x00), at: seconds(2.1))) == [.setTargetResistanceLevel(tenths: 40)])
    }

    @Test func aModeAskedForAtTheStartThatTheTrainerLacksIsSaidAtConnection() throws {
        var control = TrainerControl(mode: .simulation)
        let ergOnly = TrainerCapabilities(features: FitnessMachineFeature(targets: [.power]))
        let actions = control.connected(ergOnly, at: .zero)
        #expect(writes(actions).isEmpty)
        #expect(told(actions).first?.hasPrefix("the trainer does not take simulation") == true)
        #expect(control.mode == .free)
    }

    @Test func targetsAreHeldWithinTheDeclaredRangeAndOnItsIncrement() throws {
        let capabilities = TrainerCapabilities(
            features: FitnessMachineFeature(targets: [.power]),
            powerRange: SupportedRange(minimum: 25, maximum: 1500, minimumIncrement: 5))
        #expect(capabilities.power(2500) == 1500)
        #expect(capabilities.power(10) == 25)
        #expect(capabilities.power(252) == 250)
        #expect(capabilities.power(253) == 255)
        #expect(capabilities.power(1499) == 1500)
        // A maximum off the increment's grid: never above it.
        let odd = SupportedRange(minimum: 0, maximum: 1002, minimumIncrement: 5)
        #expect(TrainerCapabilities.fit(1001, in: odd) == 1000)
        var control = TrainerControl(mode: .erg, targetWatts: 2500)
        _ = control.connected(capabilities, at: .zero)
        #expect(writes(control.indicated(answer(0x00), at: seconds(0.1))) == [.setTargetPower(watts: 1500)])
    }

    @Test func aRefusedTargetIsSaidAndNotSentAgainUntilItChanges() throws {
        var control = ergControl(200)
        _ = try control.ask(.power(watts: 260), at: seconds(1)).get()
        let actions = control.indicated(answer(0x05, .invalidParameter), at: seconds(1.1))
        #expect(
            told(actions) == [
                "the trainer refused the value of Set Target Power as outside what it takes (invalid parameter) "
                    + "(Set Target Power 260 W)"
            ])
        #expect(writes(actions).isEmpty)
        #expect(writes(control.tick(at: seconds(2))).isEmpty)
        #expect(control.state(at: seconds(2)) == .refused)
        #expect(writes(try control.ask(.power(watts: 250), at: seconds(3)).get()) == [.setTargetPower(watts: 250)])
    }

    @Test func theRidersTargetStaysWithinWhatTheJournalReads() throws {
        var control = ergControl(2995)
        _ = try control.ask(.powerChange(watts: 10), at: seconds(1)).get()
        #expect(control.targetWatts == TrainerControl.maximumTargetWatts)
        _ = try control.ask(.powerChange(watts: -5000), at: seconds(2)).get()
        #expect(control.targetWatts == 0)
    }

    @Test func controlLostIsAskedForAgainAndTheTargetResent() throws {
        var control = ergControl(200)
        let lost = control.status([0xFF], at: seconds(5))
        #expect(writes(lost) == [.requestControl])
        #expect(told(lost).first?.contains("took control back") == true)
        #expect(writes(control.indicated(answer(0x00), at: seconds(5.1))) == [.setTargetPower(watts: 200)])
    }

    @Test func aReconnectedTrainerGetsItsModeAndTargetBack() throws {
        var control = ergControl(200)
        _ = control.ask(.power(watts: 240), at: seconds(1))
        _ = control.indicated(answer(0x05), at: seconds(1.1))
        control.disconnected()
        #expect(control.state(at: seconds(2)) == .disconnected)
        #expect(writes(control.tick(at: seconds(3))).isEmpty)
        // Asked while away: kept.
        _ = control.ask(.powerChange(watts: 10), at: seconds(4))
        #expect(writes(control.connected(fullTrainer, at: seconds(20))) == [.requestControl])
        #expect(writes(control.indicated(answer(0x00), at: seconds(20.1))) == [.setTargetPower(watts: 250)])
    }

    @Test func aCadenceDropEasesErgAndItComesBackOverFiveSeconds() throws {
        var control = ergControl(300)
        _ = control.cadence(90, at: seconds(1))
        #expect(writes(control.cadence(35, at: seconds(2))).isEmpty)
        #expect(writes(control.cadence(30, at: seconds(4.9))).isEmpty)
        // 3 s under 40 rpm: the lower of 50 % of 300 W and 100 W.
        let eased = control.cadence(30, at: seconds(5))
        #expect(writes(eased) == [.setTargetPower(watts: 100)])
        #expect(told(eased).first?.hasPrefix("cadence under 40 rpm for 3 s: ERG eased to 100 W") == true)
        #expect(control.state(at: seconds(5)) == .recovering)
        _ = control.indicated(answer(0x05), at: seconds(5.1))
        // 50 rpm is not yet back.
        #expect(writes(control.cadence(50, at: seconds(8))).isEmpty)
        // Above 60 rpm: back from 100 W to 300 W over 5 s, in steps as the answers come.
        #expect(writes(control.cadence(70, at: seconds(10))).isEmpty)
        var sent: [Int16] = []
        for tenth in 101...160 {
            let time = seconds(Double(tenth) / 10)
            for case .setTargetPower(let watts) in writes(control.tick(at: time)) {
                sent.append(watts)
                _ = control.indicated(answer(0x05), at: time)
            }
            _ = control.cadence(80, at: time)
        }
        // 100 W + 200 W × elapsed / 5 s, at each tick of 0.1 s after 10 s.
        #expect(sent.first == 104)
        #expect(sent.last == 300)
        #expect(sent == sent.sorted())
        #expect(control.effectiveWatts(at: seconds(12.5)) == 200)
        #expect(control.state(at: seconds(16)) == .controlled)
    }

    @Test func aSmallTargetIsNotEasedForACadenceOfAStoppedRiderUnderHalf() throws {
        // 120 W target: recovery is the lower of 60 W and 100 W.
        var control = ergControl(120)
        _ = control.cadence(20, at: seconds(1))
        #expect(writes(control.cadence(20, at: seconds(4))) == [.setTargetPower(watts: 60)])
    }

    @Test func aSilentCadenceSensorCountsAsStopped() throws {
        var control = ergControl(200)
        _ = control.cadence(85, at: seconds(1))
        // No cadence for 5 s counts as 0 rpm; 3 s later the target eases.
        #expect(writes(control.tick(at: seconds(6.5))).isEmpty)
        #expect(writes(control.tick(at: seconds(9.5))) == [.setTargetPower(watts: 100)])
    }

    @Test func aBigStepIsRampedOverTwoSeconds() throws {
        var control = ergControl(150)
        // +50 W: at once.
        #expect(writes(try control.ask(.power(watts: 200), at: seconds(1)).get()) == [.setTargetPower(watts: 200)])
        _ = control.indicated(answer(0x05), at: seconds(1.05))
        // +200 W: 200 → 400 over 2 s, starting where it is (nothing new to write yet).
        #expect(writes(try control.ask(.power(watts: 400), at: seconds(2)).get()).isEmpty)
        #expect(control.state(at: seconds(2.5)) == .ramping)
        #expect(writes(control.tick(at: seconds(2.5))) == [.setTargetPower(watts: 250)])
        _ = control.indicated(answer(0x05), at: seconds(2.5))
        #expect(writes(control.tick(at: seconds(3))) == [.setTargetPower(watts: 300)])
        _ = control.indicated(answer(0x05), at: seconds(3))
        #expect(writes(control.tick(at: seconds(4.5))) == [.setTargetPower(watts: 400)])
    }

    @Test func powerMatchSteersByTheMeterWhenTheTrainerReadsFourPercentHigh() throws {
        var rules = TrainerRules()
        rules.powerFromMeter = true
        var control = ergControl(250, rules: rules)
        // The trainer holds its own reading at what it is sent; the meter reads 1/1.04 of it.
        var sent = 250.0
        for second in 3..<240 {
            let at = seconds(Double(second))
            control.meterPower(sent / 1.04, at: at)
            let written = answerEvery(&control, control.trainerPower(sent, at: at) + control.tick(at: at), at: at)
            for case .setTargetPower(let watts) in written { sent = Double(watts) }
        }
        // The meter now reads the target: the trainer is sent 4 % more, its offset −10 W.
        #expect(abs(sent / 1.04 - 250) <= 1)
        #expect(abs((control.powerMatchOffsetWatts ?? 0) + 10) <= 1)
    }

    @Test func powerMatchIsHeldWithinFiftyWattsAndFrozenAfterATargetChange() throws {
        var rules = TrainerRules()
        rules.powerFromMeter = true
        var control = ergControl(300, rules: rules)
        for second in 3..<400 {
            let at = seconds(Double(second))
            control.meterPower(200, at: at)
            _ = control.trainerPower(300, at: at)
        }
        #expect(control.powerMatchOffsetWatts == -50)
        // Within 3 s of a change, readings do not move the average.
        var frozen = ergControl(300, rules: rules)
        _ = frozen.ask(.power(watts: 310), at: seconds(10))
        frozen.meterPower(200, at: seconds(11))
        _ = frozen.trainerPower(300, at: seconds(11))
        #expect(frozen.powerMatchOffsetWatts == 0)
    }

    /// ERG from the start (`record --control erg --power-from meter`): readings that come while control is being
    /// asked for do not move the target the trainer is first sent.
    @Test func aTrainerThatConnectsIsFirstSentTheRidersOwnTarget() throws {
        var rules = TrainerRules()
        rules.powerFromMeter = true
        var control = TrainerControl(rules: rules, mode: .erg, targetWatts: 250)
        #expect(writes(control.connected(fullTrainer, at: .zero)) == [.requestControl])
        control.meterPower(240, at: seconds(0.2))
        _ = control.trainerPower(260, at: seconds(0.2))
        control.meterPower(240, at: seconds(0.4))
        _ = control.trainerPower(260, at: seconds(0.4))
        #expect(writes(control.indicated(answer(0x00), at: seconds(0.5))) == [.setTargetPower(watts: 250)])
        #expect(control.powerMatchOffsetWatts == 0)
    }

    @Test func powerMatchWithoutAMeterSaysSoAndSteersByTheTrainer() throws {
        var rules = TrainerRules()
        rules.powerFromMeter = true
        var control = TrainerControl(rules: rules)
        _ = control.connected(fullTrainer, at: .zero)
        let actions = try control.ask(.power(watts: 200), at: seconds(1)).get()
        #expect(told(actions).first?.hasPrefix("power match: no power meter is sending") == true)
        #expect(control.powerMatchOffsetWatts == nil)
    }

    @Test func releaseResetsATrainerThatIsHeldAndLeavesOneThatIsNot() throws {
        var held = ergControl(200)
        #expect(writes(held.release(at: seconds(9))) == [.reset])
        var never = TrainerControl()
        _ = never.connected(fullTrainer, at: .zero)
        #expect(never.release(at: seconds(1)).isEmpty)
    }

    @Test func freeLetsTheTrainerGo() throws {
        var control = ergControl(200)
        #expect(writes(try control.ask(.mode(.free), at: seconds(1)).get()) == [.reset])
        _ = control.indicated(answer(0x01), at: seconds(1.1))
        #expect(control.state(at: seconds(2)) == .free)
        #expect(writes(control.tick(at: seconds(3))).isEmpty)
    }

    @Test func simulationHoldsTheGradeWithinTheDeclaredInclination() throws {
        var capabilities = fullTrainer
        capabilities.inclinationRange = SupportedRange(minimum: -100, maximum: 200, minimumIncrement: 5)
        var control = TrainerControl()
        _ = control.connected(capabilities, at: .zero)
        _ = control.ask(.grade(percent: 25), at: seconds(1))
        guard case .setIndoorBikeSimulation(let road)? = writes(control.indicated(answer(0x00), at: seconds(1.1))).first
        else {
            Issue.record("no simulation parameters sent")
            return
        }
        #expect(road.gradeHundredthsOfPercent == 2000)
        #expect(road.rollingResistanceTenThousandths == 40)
    }

    @Test func nothingIsAskedOfARecorderWithoutATrainer() throws {
        let control = TrainerControl()
        #expect(
            control.refusal(of: .power(watts: 200))
                == "no smart trainer is connected (none with a Fitness Machine control point)")
    }
}
