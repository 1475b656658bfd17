import RecorderInterface
import StructuredWorkouts
import Testing
import TrainerControl
import WorkoutStore

@testable import LiveRecording

/// A live ride's workout on its own: the times are the moving seconds each test passes.
@Suite struct WorkoutGuideTests {
    static let planned = PlannedWorkout(
        StructuredWorkout(
            name: "G",
            steps: [
                WorkoutStep(
                    .warmup, .seconds(10), .steady(.percent(50)), texts: [StepText(offsetSeconds: 4, "Settle in")]),
                WorkoutStep(.active, .seconds(10), .free),
                WorkoutStep(.active, .seconds(60), .steady(.watts(300)), scored: true),
                WorkoutStep(.active, .seconds(60), .free, gradeHundredths: -250),
            ]),
        ftpWatts: 200)

    @Test func eachStepIsToldAndAskedOfTheTrainerOnce() {
        var guide = WorkoutGuide(id: "g", planned: Self.planned)
        #expect(
            guide.advance(movingSeconds: 0, distanceMeters: 0, cadenceRPM: 90) == [
                .tell("step 1 of 4: 0:10 at 100 W"), .steer(.power(watts: 100)),
            ])
        #expect(guide.advance(movingSeconds: 3.5, distanceMeters: 0, cadenceRPM: 90) == [])
        #expect(guide.advance(movingSeconds: 4, distanceMeters: 0, cadenceRPM: 90) == [.tell("Settle in")])
        // A step without a target lets the trainer go.
        #expect(
            guide.advance(movingSeconds: 10, distanceMeters: 0, cadenceRPM: 90) == [
                .tell("step 2 of 4: 0:10 at free ride"), .steer(.mode(.free)),
            ])
        // A refusal (no trainer yet) is asked again at the next second.
        guide.trainerRefused()
        #expect(guide.advance(movingSeconds: 11, distanceMeters: 0, cadenceRPM: 90) == [.steer(.mode(.free))])
        #expect(guide.apply(.intensity(percent: 90)) == [])
        #expect(
            guide.apply(.skip) == [.tell("step 3 of 4: 1:00 at 270 W"), .steer(.power(watts: 270))])
        var shown = LiveStatus(published: RecorderStatus())
        guide.describe(&shown)
        #expect(shown.stepIndex == 2 && shown.intensityPercent == 90)
        #expect(shown.screen.profile.map(\.seconds) == [10, 10, 60, 60])
        #expect(shown.screen.profile.map(\.startWatts) == [90, nil, 270, nil])
        #expect(shown.workoutProfile == "10:90:90,10:-:-,60:270:270,60:-:-")
        // A step with a grade and no power puts the trainer in simulation at it.
        #expect(
            guide.apply(.skip) == [.tell("step 4 of 4: 1:00 at a -2.5 % grade"), .steer(.grade(percent: -2.5))])
        guide.describe(&shown)
        #expect(shown.screen.stepGradePercent == -2.5 && shown.gradePercent == -2.5 && shown.targetPowerWatts == nil)
    }

    @Test func eachStepAfterTheFirstBeginsALapButOneALapPressBegan() {
        // As the stored ride splits its laps where each step began (a lap pressed at a step's start is its lap).
        let open = PlannedWorkout(
            StructuredWorkout(
                name: "O",
                steps: [
                    WorkoutStep(.warmup, .seconds(10), .free), WorkoutStep(.active, .open, .free),
                    WorkoutStep(.active, .seconds(10), .free),
                ]),
            ftpWatts: nil)
        var guide = WorkoutGuide(id: "o", planned: open)
        _ = guide.advance(movingSeconds: 0, distanceMeters: 0, cadenceRPM: 90)
        #expect(guide.stepLaps == 0)
        _ = guide.advance(movingSeconds: 10, distanceMeters: 0, cadenceRPM: 90)
        #expect(guide.stepLaps == 1, "the open step began a lap")
        // The rider's lap press ends the open step: that press is the next step's lap, not one more.
        _ = guide.lapPressed()
        #expect(guide.stepLaps == 1)
        _ = guide.advance(movingSeconds: 30, distanceMeters: 0, cadenceRPM: 90)
        #expect(guide.stepLaps == 1, "the workout is over: no step began")
    }

    @Test func aRampTestEndsWhenTheCadenceStaysUnder50RpmFor5Seconds() {
        var guide = WorkoutGuide(id: "ramp-test", planned: Self.planned, endsWhenPedallingStops: true)
        // Low cadence before the scored step does not count.
        _ = guide.advance(movingSeconds: 19.5, distanceMeters: 0, cadenceRPM: 30)
        #expect(!guide.advance(movingSeconds: 20, distanceMeters: 0, cadenceRPM: 80).contains { $0.isEnd })
        // 4 s under 50 rpm is not yet 5.
        #expect(!guide.advance(movingSeconds: 21, distanceMeters: 0, cadenceRPM: 45).contains { $0.isEnd })
        #expect(!guide.advance(movingSeconds: 25, distanceMeters: 0, cadenceRPM: 45).contains { $0.isEnd })
        // Back above 50 rpm: the count starts again.
        #expect(!guide.advance(movingSeconds: 26, distanceMeters: 0, cadenceRPM: 80).contains { $0.isEnd })
        #expect(!guide.advance(movingSeconds: 27, distanceMeters: 0, cadenceRPM: nil).contains { $0.isEnd })
        #expect(
            guide.advance(movingSeconds: 32, distanceMeters: 0, cadenceRPM: 10).contains(
                .end("cadence under 50 rpm for 5 s: the ramp test is over")))
        // Not a ramp test: never ended by the cadence.
        var other = WorkoutGuide(id: "g", planned: Self.planned)
        _ = other.advance(movingSeconds: 20, distanceMeters: 0, cadenceRPM: 0)
        #expect(!other.advance(movingSeconds: 40, distanceMeters: 0, cadenceRPM: 0).contains { $0.isEnd })
    }
}

extension WorkoutGuide.Action {
    var isEnd: Bool { if case .end = self { true } else { false } }
}

/// A guided ramp test through the recorder, the scripted bus and a clock moved by hand: each minute's target written
/// to the trainer, the ride ended by itself once the cadence stays under 50 rpm for 5 s, and scored as a ramp test.
@Suite struct RampTestScenarioTests {
    typealias Rig = RecorderScenarioTests.Rig

    /// One second of riding: the clock moved on by two flushes, the meter's power and the trainer's cadence sent.
    func second(_ rig: Rig, watts: Int16, cadenceRPM: Double) async throws {
        for _ in 0..<2 {
            rig.clock.advance(by: .milliseconds(500))
            try await rig.settled()
        }
        await rig.bus.notifyPower(rig.meter, watts: watts)
        await rig.bus.notifyBikeData(rig.trainer, watts: watts, cadenceRPM: cadenceRPM)
        try await rig.settled()
    }

    @Test func theRampTestDrivesTheTrainerMinuteByMinuteAndEndsWhenTheRiderStops() async throws {
        let ramp = BuiltInWorkouts.ramp(startWatts: 100, stepWatts: 20)
        let rig = try await Rig(
            {
                $0.workout = LiveRecorder.WorkoutChoice(id: "ramp-test", planned: PlannedWorkout(ramp, ftpWatts: nil))
                $0.plan.fitnessTest = .ramp
            }, trainer: [.power])
        // What the recorder says of the FTP once the ride is saved (its notices end when its run does).
        let notices = rig.recorder.announcements.subscribe()
        let testWords = Task { () -> [String] in
            var said: [String] = []
            for await case .notice(let words) in notices where words.contains("FTP") { said.append(words) }
            return said
        }
        // The 5-minute warm-up at 100 W, then five minutes from 100 W to 180 W (a ramp is scored from its fifth
        // minute on) and some of the sixth, at 200 W, pedalling at 90 rpm.
        for _ in 0..<(300 + 5 * 60 + 20) { try await second(rig, watts: 200, cadenceRPM: 90) }
        let written = await rig.bus.controlPointWrites(rig.trainer).map {
            $0.map { String(format: "%02x", $0) }.joined()
        }
        #expect(written.prefix(2) == ["00", "056400"], "control, then the warm-up's 100 W")
        #expect(written.contains("056400") && written.contains("057800") && written.contains("05b400"), "\(written)")
        #expect(await rig.recorder.status().stepIndex == 6)
        #expect(await rig.state() == .running)
        // The rider cannot turn the pedals over: under 50 rpm for 5 s (and a few seconds for the 1 Hz series to
        // show it), and the ride ends and is saved by itself.
        var halfSeconds = 0
        while await rig.state() == .running, halfSeconds < 40 {
            rig.clock.advance(by: .milliseconds(500))
            halfSeconds += 1
            // Settled, or over: a recorder whose ride ended by itself waits on no timer any more.
            try await eventually("the recorder at rest or the ride over") {
                if await rig.state() != .running { return true }
                let drained = await rig.bus.isDrained
                let idle = await rig.recorder.isIdle
                return rig.clock.sleeperCount == 1 && drained && idle
            }
            if halfSeconds % 2 == 0, await rig.state() == .running {
                await rig.bus.notifyPower(rig.meter, watts: 50)
                await rig.bus.notifyBikeData(rig.trainer, watts: 50, cadenceRPM: 30)
            }
        }
        // 5 s under 50 rpm, and the few seconds the 1 Hz series takes to show the cadence.
        #expect(halfSeconds <= 20, "ended \(Double(halfSeconds) / 2) s after the cadence fell")
        let summary = try #require(try await rig.running.value)
        #expect(summary.plan.fitnessTest == .ramp)
        #expect(summary.statistics.plan?.workoutName == "Ramp test")
        // Scored as a ramp test: 75 % of the best minute (200 W).
        let estimate = try #require(try rig.store.ftpHistory().estimates.last)
        #expect(estimate.method == .rampTest && estimate.workoutId == summary.id)
        #expect(abs(estimate.watts - 150) < 1)
        #expect(summary.statistics.plan?.scoredPart?.stepsRiddenToTheEnd == 5)
        let said = await testWords.value
        #expect(said == ["FTP 150 W from this ramp test (75 % of its best minute, 200 W), the FTP in force"], "\(said)")
        #expect(await rig.bus.controlPointWrites(rig.trainer).last == [0x01], "the trainer let go")
    }
}
