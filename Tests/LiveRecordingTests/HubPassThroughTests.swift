import CyclingSensors
import Testing
import TrainerControl
import Workouts

@testable import LiveRecording

/// An app's control of the trainer through the sensor hub, as plain calls on the `RecorderCore`: what the app asks
/// goes through the rider's own trainer control, so the trainer's declared range (0–1500 W in `CoreRig`), the ramp
/// of big steps and the cadence safety hold whatever the app asks; the app is answered as the Fitness Machine
/// Service 1.0 lays out (4.16.2: `80`, the request's op code, 01 Success or 05 Control Not Permitted); the trainer is
/// never left holding the app's load; the rider takes it back from any screen; and both directions are in the
/// ride's journal.
@Suite struct HubPassThroughTests {
    static let requestControl: [UInt8] = [0x00]
    /// Set Target Power (op code 05, sint16 watts little-endian).
    static func power(_ watts: Int16) -> [UInt8] {
        let bits = UInt16(bitPattern: watts)
        return [0x05, UInt8(bits & 0xFF), UInt8(bits >> 8)]
    }

    /// The app asks for the trainer, then ERG at `watts`.
    static func appTakes(_ rig: CoreRig, watts: Int16) {
        rig.appWrites(requestControl)
        rig.appWrites(power(watts))
    }

    /// A rig 2 s into a ride (and 2 s more after the rider asked for `riderAsked`), an app then asking for the
    /// trainer and `watts`; `trainerAnswers` false: the trainer holds its answers until the test gives them.
    static func appAsking(_ watts: Int16, riderAsked: TrainerAsk? = nil, trainerAnswers: Bool = true) -> CoreRig {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 2)
        if let riderAsked {
            rig.steer(riderAsked, byRider: true)
            rig.ride(seconds: 2)
        }
        rig.answers = trainerAnswers
        appTakes(rig, watts: watts)
        return rig
    }

    static func answers(_ rig: CoreRig) -> [[UInt8]] {
        rig.toApps.compactMap { if case .controlPointAnswer(let bytes) = $0 { bytes } else { nil } }
    }

    @Test func anAppsTargetAboveTheTrainersRangeIsHeldAtItsTopAndRampedThere() {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 3)
        Self.appTakes(rig, watts: 150)
        rig.ride(seconds: 3)
        let before = rig.ergWrites.count
        rig.appWrites(Self.power(3000))
        #expect(Self.answers(rig) == [[0x80, 0x00, 0x01], [0x80, 0x05, 0x01], [0x80, 0x05, 0x01]])
        rig.ride(seconds: 20)
        #expect(rig.ergWatts.max() == 1500, "\(rig.ergWatts)")
        #expect(rig.ergWrites.count - before > 2, "a big step is ramped, not sent at once")
        #expect(rig.risesWithinTheirLimit(), "\(rig.ergWrites)")
        // Both directions are in the journal: the app's request and the hub's answer.
        #expect(
            rig.journal.contains(
                .hub(.written(app: "00:AA:02:00:00:06", characteristic: 0x2AD9, value: [0x05, 0xB8, 0x0B]))))
        #expect(rig.journal.contains(.hub(.sent(characteristic: 0x2AD9, value: [0x80, 0x05, 0x01]))))
    }

    /// The app is answered what the real trainer answered the first write its request caused (FTMS 4.16.2): Success
    /// once the trainer says Success, the trainer's own Operation Failed when it refuses.
    @Test func theAppIsAnsweredWhatTheRealTrainerAnswered() {
        let rig = Self.appAsking(250, trainerAnswers: false)
        // Request Control is the hub's to answer; the target waits for the trainer, asked for control first.
        #expect(Self.answers(rig) == [[0x80, 0x00, 0x01]])
        rig.answerPending()
        #expect(Self.answers(rig) == [[0x80, 0x00, 0x01], [0x80, 0x05, 0x01]])
        // The target's own Success answers nothing more: one answer per request.
        rig.answerPending()
        #expect(Self.answers(rig).count == 2)
        #expect(rig.ergWatts.last == 250)
        rig.appWrites(Self.power(300))
        #expect(Self.answers(rig).count == 2, "waiting for the trainer")
        rig.indicate([0x80, 0x05, 0x04])
        #expect(Self.answers(rig).last == [0x80, 0x05, 0x04])
        #expect(rig.journal.contains(.hub(.sent(characteristic: 0x2AD9, value: [0x80, 0x05, 0x04]))))
    }

    @Test func anAppsRequestTheTrainerLeavesUnansweredFailsAfterThreeSeconds() {
        let rig = Self.appAsking(250, trainerAnswers: false)
        rig.ride(seconds: 2)
        #expect(Self.answers(rig) == [[0x80, 0x00, 0x01]])
        rig.ride(seconds: 1.5)
        #expect(Self.answers(rig) == [[0x80, 0x00, 0x01], [0x80, 0x05, 0x04]])
        #expect(rig.told.contains("the trainer did not answer the app's request: the app was told it failed"))
    }

    @Test func aCadenceDropEasesErgWhileTheAppStillAsksForItsTarget() {
        let rig = Self.appAsking(300)
        rig.ride(seconds: 5)
        #expect(rig.ergWatts.last == 300)
        // The rider stops pedalling; the app goes on asking for 300 W every second, as apps do.
        for _ in 0..<5 {
            rig.appWrites(Self.power(300))
            rig.ride(seconds: 1, cadenceRPM: 20)
        }
        // After 3 s under 40 rpm ERG eases to min(300 / 2, 100) = 100 W, and stays there while the app asks.
        #expect(rig.status.trainerState == .recovering)
        #expect(rig.ergWatts.last == 100, "\(rig.ergWatts)")
    }

    @Test func anAppLeavingMidIntervalGivesTheTrainerBackToWhatTheRiderAsked() {
        let rig = Self.appAsking(280, riderAsked: .power(watts: 150))
        rig.ride(seconds: 5)
        #expect(rig.ergWatts.last == 280)
        let before = rig.writes.count
        rig.appLeaves()
        rig.ride(seconds: 3)
        let after = rig.writes[before...].map(\.opCode)
        // Let go first (a Reset), then the rider's own 150 W asked again.
        #expect(after.first == FitnessMachineControlPoint.OpCode.reset, "\(after)")
        #expect(rig.ergWatts.last == 150)
        #expect(rig.told.contains("the app's link is gone: the trainer is the rider's again"))
    }

    @Test func anAppLeavingWhenTheRiderAskedNothingLeavesTheTrainerFree() {
        let rig = Self.appAsking(250)
        rig.ride(seconds: 3)
        rig.appLeaves()
        rig.ride(seconds: 3)
        #expect(rig.writes.last?.opCode == FitnessMachineControlPoint.OpCode.reset)
        #expect(rig.status.trainerMode == .free)
        #expect(
            rig.journal.last { if case .setting(.trainerTarget) = $0 { true } else { false } }
                == .setting(.trainerTarget(.free)))
    }

    @Test func theWorkoutWaitsWhileAnAppHoldsTheTrainerAndGoesOnOnceItLetsGo() {
        let rig = CoreRig(workout: RecorderCoreTests.twoSteps)
        rig.ride(seconds: 4)
        #expect(rig.ergWatts.last == 100)
        Self.appTakes(rig, watts: 180)
        #expect(rig.told.contains("an app holds the trainer: the workout's targets wait until it lets go"))
        // Past the 10 s step change: the step's 300 W is not asked while the app holds the trainer.
        rig.ride(seconds: 10)
        #expect(rig.status.stepIndex == 1)
        #expect(rig.ergWatts.last == 180, "\(rig.ergWatts)")
        #expect(!rig.ergWatts.contains(300))
        // The app sends Reset: answered Success, and the step's 300 W is asked again.
        rig.appWrites([0x01])
        rig.ride(seconds: 4)
        #expect(Self.answers(rig).last == [0x80, 0x01, 0x01])
        #expect(rig.ergWatts.last == 300, "\(rig.ergWatts)")
    }

    @Test func theRiderTakesTheTrainerBackFromAnyScreenAndTheAppIsToldSo() {
        let rig = Self.appAsking(250)
        rig.ride(seconds: 3)
        rig.steer(.power(watts: 200), byRider: true)
        // Fitness Machine Status: Control Permission Lost (FTMS 4.17, op code 0xFF), journalled as sent.
        #expect(rig.toApps.contains(.machineStatus([0xFF])))
        #expect(rig.journal.contains(.hub(.sent(characteristic: 0x2ADA, value: [0xFF]))))
        rig.appWrites(Self.power(400))
        #expect(Self.answers(rig).last == [0x80, 0x05, 0x05])
        rig.ride(seconds: 3)
        #expect(rig.ergWatts.last == 200)
        #expect(!rig.ergWatts.contains(400))
    }

    /// Each change of who holds the trainer is a `hub-holder` line in the ride's journal (what the ride's time under
    /// an app's control is measured from): an app taking it, its Reset, the rider taking it back, its link going;
    /// a refused request changes nothing and writes none.
    @Test func whoHoldsTheTrainerIsJournalledEachTimeItChanges() {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 2)
        rig.carryOut(rig.core.appJoined("00:AA:02:00:00:06", name: "iPad"))
        let app = HubExchange.holder(app: "00:AA:02:00:00:06", name: "iPad")
        let rider = HubExchange.holder(app: nil, name: nil)
        rig.appWrites(Self.requestControl)
        rig.appWrites([0x01])
        rig.appWrites(Self.requestControl)
        rig.steer(.power(watts: 200), byRider: true)
        rig.appWrites(Self.requestControl)
        rig.appLeaves()
        rig.carryOut(rig.core.appJoined("00:AA:02:00:00:06", name: "iPad"))
        rig.appWrites(Self.requestControl)
        rig.appLeaves()
        let holders = rig.journal.compactMap {
            if case .hub(.holder(let a, let n)) = $0 { HubExchange.holder(app: a, name: n) } else { nil }
        }
        #expect(holders == [app, rider, app, rider, app, rider])
        // The line comes straight after the request that changed it, before its answer.
        let first = rig.journal.firstIndex(of: .hub(app))
        #expect(
            first.map { rig.journal[$0 - 1] }
                == .hub(.written(app: "00:AA:02:00:00:06", characteristic: 0x2AD9, value: [0x00])))
    }

    /// The status every screen reads says which apps are on the hub, over which transport, and which one holds the
    /// trainer; nothing once they left.
    @Test func theStatusSaysWhichAppIsOnTheHubAndWhoHoldsTheTrainer() {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 2)
        #expect(rig.status.published.hubApps.isEmpty && rig.status.published.trainerHolder.isEmpty)
        rig.carryOut(rig.core.appJoined("00:AA:02:00:00:06", name: nil))
        rig.carryOut(rig.core.appJoined("00:AA:02:00:00:07", name: nil))
        #expect(rig.status.published.hubApps == "00:AA:02:00:00:06 over Bluetooth, 00:AA:02:00:00:07 over Bluetooth")
        // BlueZ read the first one's name later.
        rig.carryOut(rig.core.appJoined("00:AA:02:00:00:06", name: "iPad"))
        #expect(
            rig.status.published.hubApps
                == "iPad (00:AA:02:00:00:06) over Bluetooth, 00:AA:02:00:00:07 over Bluetooth")
        #expect(rig.status.published.trainerHolder.isEmpty)
        rig.appWrites(Self.requestControl)
        #expect(rig.status.published.trainerHolder == "iPad (00:AA:02:00:00:06)")
        rig.appLeaves()
        #expect(rig.status.published.hubApps == "00:AA:02:00:00:07 over Bluetooth")
        #expect(rig.status.published.trainerHolder.isEmpty)
    }

    @Test func theHubOffersWhatTheRealTrainerDeclares() throws {
        let rig = CoreRig(workout: nil)
        let declared = rig.toApps.compactMap { if case .trainerDeclared(let c) = $0 { c } else { nil } }
        #expect(declared.count == 1)
        #expect(declared.first?.powerRange == SupportedRange(minimum: 0, maximum: 1500, minimumIncrement: 1))
    }
}
