import BlueZ
import CyclingSensors
import Foundation
import RideJournal
import Testing
import TrainerControl
import WorkoutStore
import Workouts

@testable import LiveRecording

/// The recorder steering a smart trainer through the scripted BlueZ: control asked for once the trainer is
/// subscribed, the rider's targets written and journalled with the trainer's answers, refusals said in words,
/// a reconnected trainer told its target again, the trainer let go before the ride is saved. (The rules
/// themselves, in milliseconds, are `TrainerControlTests`.)
@Suite struct TrainerScenarioTests {
    typealias Rig = RecorderScenarioTests.Rig

    /// Hex of each value written to the trainer's control point.
    func written(_ rig: Rig) async -> [String] {
        await rig.bus.controlPointWrites(rig.trainer).map { $0.map { String(format: "%02x", $0) }.joined() }
    }

    /// The trainer's part of the status (its state, the rider's ERG target, its refusal); nil while no trainer has
    /// connected.
    func trainerStatus(_ rig: Rig) async -> (state: TrainerState?, targetPowerWatts: Int?, message: String)? {
        let status = await rig.recorder.status()
        guard status.trainerMode != nil else { return nil }
        return (status.trainerState, status.screen.trainerTargetWatts, status.trainerMessage)
    }

    @Test func ergIsAskedForTargetedAndLetGoBeforeTheRideIsSaved() async throws {
        let rig = try await Rig(
            {
                $0.trainerMode = .erg; $0.trainerTargetWatts = 180
            }, trainer: [.power])
        try await rig.ride(seconds: 2)
        // Request Control, then the mode's target: 180 W.
        #expect(await written(rig) == ["00", "05b400"])
        #expect(await trainerStatus(rig)?.state == .controlled)
        #expect(await rig.recorder.steer(.power(watts: 250)) == nil)
        try await rig.settled()
        #expect(await written(rig).last == "05fa00")
        #expect(await trainerStatus(rig)?.targetPowerWatts == 250)
        let summary = try #require(try await rig.stop())
        // Reset went out before the ride was saved, and the journal holds what was asked and what was said.
        #expect(await written(rig).last == "01")
        let trainerLines = try rig.store.journal(summary.id).map(Journal.line).filter { $0.contains(" 2ad9 ") }.map {
            $0.split(separator: " ").dropFirst().joined(separator: " ")
        }
        #expect(
            trainerLines == [
                "write F1:22:33:44:55:66 2ad9 00", "notify F1:22:33:44:55:66 2ad9 800001",
                "write F1:22:33:44:55:66 2ad9 05b400", "notify F1:22:33:44:55:66 2ad9 800501",
                "write F1:22:33:44:55:66 2ad9 05fa00", "notify F1:22:33:44:55:66 2ad9 800501",
                "write F1:22:33:44:55:66 2ad9 01", "notify F1:22:33:44:55:66 2ad9 800101",
            ])
    }

    @Test func aResistanceOnlyTrainerAskedForErgSaysWhyAndIsNeverSentIt() async throws {
        let rig = try await Rig(trainer: [.resistance])
        try await rig.ride(seconds: 1)
        let refusal = await rig.recorder.steer(.power(watts: 250))
        #expect(refusal == "the trainer does not take ERG (its features do not list it; it takes resistance)")
        #expect(await rig.recorder.steer(.resistance(percent: 30)) == nil)
        try await rig.settled()
        #expect(await written(rig) == ["00", "041e"])
        #expect(await !written(rig).contains { $0.hasPrefix("05") })
        _ = try await rig.stop()
    }

    @Test func controlNotPermittedIsSaidInWordsOnTheStatus() async throws {
        let rig = try await Rig(
            { $0.trainerMode = .erg }, trainer: [.power], answers: [0x00: .controlNotPermitted])
        try await rig.ride(seconds: 5)
        // The first Request Control and three more, one a second.
        #expect(await written(rig) == ["00", "00", "00", "00"])
        let status = try #require(await trainerStatus(rig))
        #expect(status.state == .refused)
        #expect(
            status.message
                == "the trainer refused control: another app holds it — close Zwift or the trainer's own app")
        #expect(await rig.recorder.status().screen.message == status.message)
        _ = try await rig.stop()
    }

    @Test func aTrainerThatReconnectsIsToldItsTargetAgain() async throws {
        let rig = try await Rig(
            {
                $0.trainerMode = .erg; $0.trainerTargetWatts = 200
            }, trainer: [.power])
        try await rig.ride(seconds: 1)
        #expect(await rig.recorder.steer(.powerChange(watts: 10)) == nil)
        try await rig.settled()
        await rig.bus.drop(rig.trainer)
        try await rig.settled()
        #expect(await trainerStatus(rig)?.state == .disconnected)
        // The watchdog connects it again; control and 210 W follow without anyone asking.
        try await rig.ride(seconds: 10)
        // (The trainer sends nothing here, so the silence watchdog reconnects it again later: each time alike.)
        #expect(await Array(written(rig).prefix(5)) == ["00", "05c800", "05d200", "00", "05d200"])
        #expect(await trainerStatus(rig)?.state == .controlled)
        _ = try await rig.stop()
    }

    @Test func controlTakenBackByTheTrainerIsAskedForAgain() async throws {
        let rig = try await Rig(
            {
                $0.trainerMode = .erg; $0.trainerTargetWatts = 200
            }, trainer: [.power])
        try await rig.ride(seconds: 1)
        await rig.bus.notifyStatus(rig.trainer, [0xFF])
        try await rig.settled()
        #expect(await written(rig) == ["00", "05c800", "00", "05c800"])
        _ = try await rig.stop()
    }

    @Test func aCadenceDropOnTheTrainerEasesErg() async throws {
        let rig = try await Rig(
            {
                $0.trainerMode = .erg; $0.trainerTargetWatts = 300
            }, trainer: [.power])
        for _ in 0..<8 {
            await rig.bus.notifyBikeData(rig.trainer, watts: 300, cadenceRPM: 30)
            try await rig.ride(seconds: 0.5, pedalEvery: 0)
        }
        #expect(await written(rig).contains("056400"))
        #expect(await trainerStatus(rig)?.state == .recovering)
        _ = try await rig.stop()
    }

    @Test func aStartsControlKeySetsTheModeOrRefusesTheStart() async throws {
        let rig = try await Rig({ $0.waitForStart = true }, trainer: [.power])
        try await rig.ride(seconds: 1)
        let presets = await rig.recorder.presets()
        let sim = try StartRequest(style: ["control": .text("sim")], presets: presets)
        await #expect(throws: LiveRecorder.StartRefusal.self) { try await rig.recorder.start(sim) }
        #expect(await rig.state() == .waiting)
        #expect(await written(rig).isEmpty)
        let erg = try StartRequest(style: ["control": .text("erg"), "powerFrom": .text("meter")], presets: presets)
        #expect(try await rig.recorder.start(erg) > 0)
        try await rig.settled()
        #expect(await written(rig) == ["00", "059600"])
        #expect(await rig.recorder.steersByMeter())
        _ = try await rig.stop()
    }

    @Test func theControlsHighestTargetIsWhatTheJournalReads() {
        #expect(TrainerControl.maximumTargetWatts == TrainerTarget.ergWatts.upperBound)
    }

    @Test func noTrainerNoSteering() async throws {
        let rig = try await Rig()
        try await rig.ride(seconds: 1)
        #expect(
            await rig.recorder.steer(.power(watts: 200))
                == "no smart trainer is connected (none with a Fitness Machine control point)")
        #expect(await trainerStatus(rig) == nil)
        _ = try await rig.stop()
    }
}

extension LiveRecorder {
    /// Whether the trainer's control steers by the power meter (a Start's `powerFrom=meter`).
    fileprivate func steersByMeter() -> Bool { core.trainerControl.rules.powerFromMeter }
}
