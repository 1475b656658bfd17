import CyclingSensors
import Testing
import TrainerControl

@testable import SensorHub

/// The answers an app is owed, as the Fitness Machine Service 1.0 lays them out (4.16.2): 0x80, the request's op
/// code, the result code (01 Success, 02 Op Code Not Supported, 03 Invalid Parameter, 04 Operation Failed,
/// 05 Control Not Permitted).
private func answered(_ effects: [AppControl.Effect]) -> [[UInt8]] {
    effects.compactMap {
        if case .answer(let bytes) = $0 { return bytes }
        return nil
    }
}

private func asked(_ effects: [AppControl.Effect]) -> [TrainerAsk] {
    effects.compactMap {
        if case .ask(let ask) = $0 { return ask }
        return nil
    }
}

private func told(_ effects: [AppControl.Effect]) -> [String] {
    effects.compactMap {
        if case .tell(let words) = $0 { return words }
        return nil
    }
}

/// The app on the hub, by its address.
private let app = "00:AA:02:00:00:06"

/// A trainer control that refuses nothing.
private func takesAll(_ ask: TrainerAsk) -> String? { nil }

/// An app that asked for control and got it.
private func holding() -> AppControl {
    var control = AppControl()
    _ = control.written([0x00], by: app, refusal: takesAll)
    return control
}

@Suite struct AppControlTests {
    @Test func nothingIsTakenBeforeTheAppAsksForControl() {
        var control = AppControl()
        // Set Target Power 250 W: 05 FA 00.
        let effects = control.written([0x05, 0xFA, 0x00], by: app, refusal: takesAll)
        #expect(answered(effects) == [[0x80, 0x05, 0x05]])
        #expect(asked(effects).isEmpty)
        let granted = control.written([0x00], by: app, refusal: takesAll)
        #expect(answered(granted) == [[0x80, 0x00, 0x01]])
        #expect(told(granted) == ["an app (00:AA:02:00:00:06) holds the trainer"])
        #expect(control.appHoldsControl)
    }

    @Test func eachTargetBecomesTheRidersOwnKindOfAsk() {
        var control = holding()
        let power = control.written([0x05, 0xFA, 0x00], by: app, refusal: takesAll)
        #expect(asked(power) == [.power(watts: 250)])
        #expect(answered(power) == [[0x80, 0x05, 0x01]])
        // Simulation: wind 0, grade 5.00 % (0x01F4 hundredths), Crr 0.0040, Cw 0.51 kg/m.
        let grade = control.written([0x11, 0x00, 0x00, 0xF4, 0x01, 0x28, 0x33], by: app, refusal: takesAll)
        #expect(asked(grade) == [.grade(percent: 5)])
        #expect(answered(grade) == [[0x80, 0x11, 0x01]])
        // A downhill: −2.50 % is 0xFF06.
        #expect(
            asked(control.written([0x11, 0x00, 0x00, 0x06, 0xFF, 0x28, 0x33], by: app, refusal: takesAll)) == [
                .grade(percent: -2.5)
            ])
        // Resistance levels 0–25.5 (the hub's declared range) are that share of the trainer's own range.
        #expect(asked(control.written([0x04, 0xFF], by: app, refusal: takesAll)) == [.resistance(percent: 100)])
        #expect(asked(control.written([0x04, 0x33], by: app, refusal: takesAll)) == [.resistance(percent: 20)])
        #expect(answered(control.written([0x07], by: app, refusal: takesAll)) == [[0x80, 0x07, 0x01]])
    }

    @Test func whatTheHubDoesNotTakeIsAnsweredWithTheSpecsCode() {
        var control = holding()
        // Set Target Speed and Spin Down Control: not in the hub's features.
        #expect(answered(control.written([0x02, 0x10, 0x27], by: app, refusal: takesAll)) == [[0x80, 0x02, 0x02]])
        #expect(answered(control.written([0x13, 0x01], by: app, refusal: takesAll)) == [[0x80, 0x13, 0x02]])
        // A power without its second byte, and a negative power.
        let cut = control.written([0x05, 0xFA], by: app, refusal: takesAll)
        #expect(answered(cut) == [[0x80, 0x05, 0x03]])
        #expect(told(cut).first?.hasPrefix("an app's Set Target Power was not understood") == true)
        #expect(answered(control.written([0x05, 0x38, 0xFF], by: app, refusal: takesAll)) == [[0x80, 0x05, 0x03]])
        // Stop or Pause with a parameter that is neither.
        #expect(answered(control.written([0x08, 0x03], by: app, refusal: takesAll)) == [[0x80, 0x08, 0x03]])
        // Nothing written: there is no op code to answer.
        let empty = control.written([], by: app, refusal: takesAll)
        #expect(answered(empty).isEmpty && told(empty).count == 1)
        #expect(control.appHoldsControl)
    }

    @Test func theTrainerControlsRefusalIsOperationFailedInWords() {
        var control = holding()
        let refusal = "the trainer does not take simulation (its features list no indoor bike simulation)"
        let effects = control.written([0x11, 0x00, 0x00, 0xF4, 0x01, 0x28, 0x33], by: app) { _ in refusal }
        #expect(answered(effects) == [[0x80, 0x11, 0x04]])
        #expect(asked(effects).isEmpty)
        #expect(told(effects).first?.hasSuffix(refusal) == true)
    }

    @Test func resetStopAndALostLinkGiveTheTrainerBack() {
        for letGo: [UInt8] in [[0x01], [0x08, 0x01], [0x08, 0x02]] {
            var control = holding()
            let effects = control.written(letGo, by: app, refusal: takesAll)
            #expect(effects.first == .release)
            #expect(answered(effects) == [[0x80, letGo[0], 0x01]])
            #expect(!control.appHoldsControl)
            // Without control again, a target is not permitted.
            #expect(answered(control.written([0x05, 0xFA, 0x00], by: app, refusal: takesAll)) == [[0x80, 0x05, 0x05]])
        }
        var control = holding()
        _ = control.written([0x05, 0x2C, 0x01], by: app, refusal: takesAll)
        let gone = control.disconnected(app)
        #expect(gone.first == .release)
        #expect(!control.appHoldsControl)
        #expect(control.disconnected(app).isEmpty)
    }

    @Test func oneAppHoldsTheTrainerAtATimeAndOnlyItsLinkGoingReleasesIt() {
        var control = holding()
        let other = "00:AA:02:00:00:07"
        #expect(answered(control.written([0x00], by: other, refusal: takesAll)) == [[0x80, 0x00, 0x05]])
        #expect(answered(control.written([0x05, 0xFA, 0x00], by: other, refusal: takesAll)) == [[0x80, 0x05, 0x05]])
        #expect(control.disconnected(other).isEmpty)
        #expect(control.holder == app)
        // The holder asking again is answered Success and told nothing new.
        let again = control.written([0x00], by: app, refusal: takesAll)
        #expect(answered(again) == [[0x80, 0x00, 0x01]] && told(again).isEmpty)
    }

    @Test func theRiderTakingTheTrainerBackKeepsTheAppOutUntilItsLinkIsMadeAgain() {
        var control = holding()
        #expect(told(control.riderTakesControl()) == ["the rider took the trainer back from the app"])
        #expect(answered(control.written([0x05, 0xFA, 0x00], by: app, refusal: takesAll)) == [[0x80, 0x05, 0x05]])
        #expect(answered(control.written([0x00], by: app, refusal: takesAll)) == [[0x80, 0x00, 0x05]])
        // Nothing to release: the app held nothing when its link went.
        #expect(control.disconnected(app).isEmpty)
        #expect(answered(control.written([0x00], by: app, refusal: takesAll)) == [[0x80, 0x00, 0x01]])
    }

    @Test func anAppsTargetPastTheTrainersRangeIsHeldAtItsTop() {
        // The pass-through asks the rider's own trainer control, which holds the trainer's declared range: an app's
        // 3000 W reaches a 0–1500 W trainer as 1500 W (05 DC 05).
        var trainer = TrainerControl(mode: .free, targetWatts: 150)
        _ = trainer.connected(
            TrainerCapabilities(
                features: FitnessMachineFeature(targets: [.power]),
                powerRange: SupportedRange(minimum: 0, maximum: 1500, minimumIncrement: 1)),
            at: .zero)
        var hub = holding()
        let effects = hub.written([0x05, 0xB8, 0x0B], by: app) { trainer.refusal(of: $0) }
        #expect(asked(effects) == [.power(watts: 3000)])
        // The trainer answers each write with Success; the ramp's steps come as time goes on.
        var actions = (try? trainer.ask(.power(watts: 3000), at: .zero).get()) ?? []
        var time = Duration.zero
        var powers: [Int] = []
        for _ in 0..<400 {
            let requests = actions.compactMap { action -> FitnessMachineRequest? in
                if case .write(let request) = action { return request }
                return nil
            }
            actions = []
            for request in requests {
                if case .setTargetPower(let watts) = request { powers.append(Int(watts)) }
                actions += trainer.indicated(
                    FitnessMachineControlPoint.response(to: request.opCode, result: .success), at: time)
            }
            if actions.isEmpty {
                time += .milliseconds(100)
                actions = trainer.tick(at: time)
            }
        }
        #expect(powers.last == 1500)
        #expect(powers.allSatisfy { $0 <= 1500 })
    }
}
