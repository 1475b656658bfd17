import RideWriting
import StructuredWorkouts
import Testing
import TrainerControl
import Workouts

@testable import LiveRecording

/// Undo as the recorder's core carries it out (Docs/guide/recording.md, undo): every rider action for 30 s, by its
/// number, once; an End that keeps the ride open for as long; what the journal alone does not put back (the
/// trainer's target, the workout's player). The expected values are the rules as the guide states them.
@Suite struct UndoScenarioTests {
    func isUndo(_ kind: RideEvent.Kind) -> Bool {
        if case .control(.undo) = kind { true } else { false }
    }

    @Test func aLapAndAPauseAreUndoneByNumberOnceAndTheRideIsAsWithoutThem() throws {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 5)
        rig.control(.lap, byRider: true)
        #expect(rig.status.published.lap == 2)
        #expect(rig.status.published.undoId == 1)
        #expect(rig.status.published.undoAction == "lap 2")
        #expect(rig.status.published.undoSecondsLeft == 30)
        rig.ride(seconds: 3)
        #expect(rig.status.published.undoSecondsLeft == 27)
        #expect(try rig.undo(1).get() == "lap 2")
        #expect(rig.status.published.lap == 1)
        // A second screen pressing the same Undo is told, and nothing else is undone.
        #expect(throws: LiveRecorder.CommandRefusal.refused("lap 2 was already undone")) { try rig.undo(1).get() }
        rig.control(.pause, byRider: true)
        #expect(rig.status.state == .paused)
        rig.ride(seconds: 4)
        #expect(try rig.undo().get() == "pause")
        #expect(rig.status.state == .running)
        rig.ride(seconds: 2)
        let status = rig.status.published
        #expect(status.movingSeconds == status.elapsedSeconds, "a pause undone paused nothing")
        // The journal keeps both actions and their undos, each naming its line.
        let events = rig.journalEvents
        let undos = events.compactMap { if case .control(.undo(let action)) = $0.kind { action } else { nil } }
        #expect(undos.map(\.verb) == ["lap", "pause"])
        for undone in undos {
            #expect(events.contains { $0.undoable == undone })
        }
        // Replayed, the journal gives the ride the journal without the two actions gives.
        func built(_ events: [RideEvent]) -> Workout? {
            var pipeline = RidePipeline()
            for event in events { pipeline.build(event) }
            return pipeline.finishWorkout()?.workout
        }
        let without = events.filter { $0.undoable.map { !undos.contains($0) } ?? !isUndo($0.kind) }
        let replayed = try #require(built(events)), plain = try #require(built(without))
        #expect(replayed.lapStarts == plain.lapStarts && replayed.lapStarts.isEmpty)
        #expect(replayed.samples == plain.samples)
        #expect(replayed.statistics == plain.statistics)
    }

    @Test func anActionOlderThan30SecondsIsRefusedInWords() {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 2)
        rig.control(.marker("bottle"), byRider: true)
        #expect(rig.status.published.undoAction == "marker “bottle”")
        rig.ride(seconds: 31)
        #expect(rig.status.published.undoId == 0, "no longer offered")
        #expect(
            throws: LiveRecorder.CommandRefusal.refused(
                "marker “bottle” was 31 s ago: an action can be undone for 30 s")
        ) {
            try rig.undo(1).get()
        }
        #expect(throws: LiveRecorder.CommandRefusal.refused("there is no action 7 to undo in this ride")) {
            try rig.undo(7).get()
        }
        // The recorder's own controls (a workout's steps, an idle end) are not the rider's: nothing to undo.
        rig.control(.lap)
        #expect(rig.status.published.undoId == 0)
    }

    @Test func aTrainerTargetUndoneAsksTheTargetBeforeItAgainWithoutANewJournalLine() throws {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 2)
        rig.steer(.power(watts: 150), byRider: true)
        rig.ride(seconds: 3)
        rig.steer(.power(watts: 250), byRider: true)
        #expect(rig.status.published.undoAction == "ERG 250 W")
        #expect(rig.status.published.undoType == "trainer")
        let targets = rig.journal.filter { if case .setting(.trainerTarget) = $0 { true } else { false } }.count
        #expect(try rig.undo().get() == "ERG 250 W")
        rig.ride(seconds: 3)
        #expect(rig.ergWatts.last == 150)
        #expect(rig.status.published.targetPowerWatts == 150)
        let after = rig.journal.filter { if case .setting(.trainerTarget) = $0 { true } else { false } }.count
        #expect(after == targets, "the undo says the target before it holds")
        #expect(rig.risesWithinTheirLimit(), "\(rig.ergWrites)")
        // An older target cannot be undone over a later one: what it would put back is not what the trainer holds.
        rig.steer(.power(watts: 200), byRider: true)
        let refusal = LiveRecorder.CommandRefusal.refused(
            "ERG 150 W cannot be undone before ERG 200 W: undo that first")
        #expect(throws: refusal) { try rig.undo(1).get() }
    }

    @Test func anEndWaitsItsWindowAndAnUndoneEndGoesOnAsTheSameRide() throws {
        let rig = CoreRig(workout: nil, waitForStart: true)
        #expect(rig.startRide() == 1)
        rig.ride(seconds: 5)
        rig.steer(.power(watts: 180), byRider: true)
        rig.ride(seconds: 5)
        rig.control(.end, byRider: true, endsAtOnce: false)
        #expect(rig.status.state == .ended)
        #expect(rig.saves == 0, "kept open for 30 s")
        #expect(rig.status.published.undoAction == "end")
        #expect(rig.writes.last?.bytes == [0x01], "the trainer let go at the End")
        // Meanwhile only the End can be undone; a lap is refused in words.
        #expect(rig.core.refusal(of: .lap)?.hasSuffix("`cyclelog undo` takes the End back") == true)
        rig.ride(seconds: 10)
        #expect(try rig.undo().get() == "end")
        #expect(rig.status.state == .running)
        #expect(rig.told.last == "the End is undone: workout 1 goes on")
        rig.ride(seconds: 5)
        #expect(rig.ergWatts.last == 180, "the trainer asked again for what it held before the End")
        #expect(rig.status.published.elapsedSeconds == 25, "the same ride, the seconds since the End in it")
        // Ended again and left: saved once its 30 s have passed.
        rig.control(.end, byRider: true, endsAtOnce: false)
        rig.ride(seconds: 29)
        #expect(rig.saves == 0)
        rig.ride(seconds: 2)
        #expect(rig.saves == 1)
        #expect(throws: LiveRecorder.CommandRefusal.refused("no workout is being recorded: there is nothing to undo")) {
            try rig.undo().get()
        }
        // What came after the final End is not in the ride's journal.
        let events = rig.journalEvents
        let end = try #require(events.lastIndex { $0.kind == .control(.end) })
        #expect(events[(end + 1)...].allSatisfy { if case .notification = $0.kind { false } else { true } })
    }

    @Test func endNowAndASecondEndSaveAtOnce() {
        let rig = CoreRig(workout: nil, waitForStart: true)
        #expect(rig.startRide() == 1)
        rig.ride(seconds: 5)
        rig.control(.end, byRider: true, endsAtOnce: true)
        #expect(rig.saves == 1)
        #expect(rig.startRide() == 1)
        rig.ride(seconds: 5)
        rig.control(.end, byRider: true, endsAtOnce: false)
        #expect(rig.saves == 1)
        rig.ride(seconds: 1)
        rig.control(.end, byRider: true, endsAtOnce: false)
        #expect(rig.saves == 2)
    }

    @Test func aSkipUndoneTakesThePlayerBackToItsStep() throws {
        let rig = CoreRig(workout: RecorderCoreTests.twoSteps)
        rig.ride(seconds: 3)
        #expect(rig.status.stepIndex == 0)
        rig.player(.skip, byRider: true)
        #expect(rig.status.stepIndex == 1)
        rig.ride(seconds: 2)
        #expect(try rig.undo().get() == "skip")
        #expect(rig.status.stepIndex == 0)
        rig.ride(seconds: 2)
        #expect(rig.ergWatts.last == 100, "the first step's target asked again")
        // An older player action cannot be undone over a later one.
        rig.player(.extend(seconds: 60), byRider: true)
        rig.player(.skip, byRider: true)
        #expect(
            throws: LiveRecorder.CommandRefusal.refused("extend 60 s cannot be undone before skip: undo that first")
        ) {
            try rig.undo(2).get()
        }
    }
}
