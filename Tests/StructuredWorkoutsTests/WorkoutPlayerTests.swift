import Testing

@testable import StructuredWorkouts
@testable import Workouts

let rampAndSteps = PlannedWorkout(
    StructuredWorkout(
        name: "P",
        steps: [
            WorkoutStep(.warmup, .seconds(100), .ramp(from: .percent(50), to: .percent(100))),
            WorkoutStep(.active, .seconds(60), .range(low: .percent(88), high: .percent(94))),
            WorkoutStep(.active, .open, .steady(.watts(150))),
            WorkoutStep(.active, .meters(1000), .free),
        ]),
    ftpWatts: 200)

@Suite struct WorkoutPlayerTests {
    @Test func aRampRisesEverySecondAndARangeIsRiddenAtItsMidpoint() {
        var player = WorkoutPlayer(rampAndSteps)
        // 50 % → 100 % of 200 W over 100 s: 100 W + 1 W a second.
        #expect(player.targetWatts == 100)
        player.advance(seconds: 1)
        #expect(player.targetWatts == 101)
        player.advance(seconds: 49)
        #expect(player.targetWatts == 150)
        #expect(player.secondsLeft == 50)
        player.advance(seconds: 50)
        #expect(player.stepIndex == 1)
        // 88–94 % of 200 W: ridden at 182 W, shown as 176–188 W.
        #expect(player.targetWatts == 182)
        #expect(player.targetRangeWatts == 176...188)
        #expect(player.nextTargetWatts == 150)
    }

    @Test func anOpenStepWaitsForTheRiderAndADistanceForTheMetres() {
        var player = WorkoutPlayer(rampAndSteps)
        player.advance(seconds: 160)
        #expect(player.stepIndex == 2)
        player.advance(seconds: 3600)
        #expect(player.stepIndex == 2)
        let moved = player.lapPressed()
        #expect(moved)
        #expect(player.stepIndex == 3)
        #expect(player.targetWatts == nil)
        player.advance(seconds: 100, meters: 999)
        #expect(!player.isFinished)
        player.advance(seconds: 1, meters: 2)
        #expect(player.isFinished)
        let movedPastTheEnd = player.lapPressed()
        #expect(!movedPastTheEnd)
    }

    @Test func skipBackExtendAndIntensity() {
        var player = WorkoutPlayer(rampAndSteps)
        player.advance(seconds: 20)
        player.apply(.extend(seconds: 60))
        #expect(player.secondsLeft == 140)
        // The ramp now spans 160 s: 20 s in is an eighth of 100 W up.
        #expect(player.targetWatts == 113)
        player.apply(.intensity(percent: 90))
        #expect(player.targetWatts == 101)
        player.apply(.back)  // 20 s in: the step starts again
        #expect(player.stepIndex == 0 && player.secondsInStep == 0 && player.secondsLeft == 100)
        player.apply(.skip)
        player.advance(seconds: 5)
        player.apply(.back)  // 5 s in: the step before
        #expect(player.stepIndex == 0)
        player.apply(.skip)
        player.apply(.skip)
        player.apply(.skip)
        player.apply(.skip)
        #expect(player.isFinished)
        player.apply(.skip)
        #expect(player.isFinished)
    }

    @Test func controlsHaveJournalWordsAndBounds() {
        for control in [PlayerControl.skip, .back, .extend(seconds: 60), .intensity(percent: 95)] {
            #expect(PlayerControl(words: control.words) == control)
        }
        #expect(PlayerControl(words: "intensity 200") == nil)
        #expect(PlayerControl(words: "extend 0") == nil)
        #expect(PlayerControl(words: "skip 2") == nil)
    }

    @Test func withinIsFivePercentOrTenWattsBelow200() {
        #expect(PlanCompliance.isWithin(190, target: 199, range: nil))
        #expect(!PlanCompliance.isWithin(188.9, target: 199, range: nil))
        #expect(PlanCompliance.isWithin(210, target: 200, range: nil))
        #expect(!PlanCompliance.isWithin(210.1, target: 200, range: nil))
        #expect(PlanCompliance.isWithin(285, target: 300, range: nil))
        #expect(!PlanCompliance.isWithin(284.9, target: 300, range: nil))
        // A range is met from its low end to its high end, each with its tolerance.
        #expect(PlanCompliance.isWithin(167, target: 182, range: 176...188))
        #expect(PlanCompliance.isWithin(197.4, target: 182, range: 176...188))
        #expect(!PlanCompliance.isWithin(165.9, target: 182, range: 176...188))
    }

    @Test func complianceFollowsTheRunningSecondsAndAPauseHoldsTheStep() {
        let planned = PlannedWorkout(
            StructuredWorkout(
                name: "C",
                steps: [
                    WorkoutStep(.active, .seconds(10), .steady(.watts(200)), cadence: 85...95),
                    WorkoutStep(.rest, .seconds(10), .steady(.watts(100))),
                ]),
            ftpWatts: nil)
        // 10 s at 200 W, 5 paused seconds, then 10 s at 150 W: the pause does not count against the first step.
        var samples = (0..<10).map { SecondSample(second: $0, powerWatts: 200, cadenceRPM: 80) }
        samples += (10..<15).map { SecondSample(second: $0, powerWatts: nil, runningFraction: 0) }
        samples += (15..<25).map { SecondSample(second: $0, powerWatts: 150) }
        let compliance = PlanCompliance(samples[...], planned: planned, controls: [], laps: [], startMicroseconds: 0)
        #expect(compliance.steps.map(\.index) == [0, 1])
        #expect(compliance.steps.map(\.startSecond) == [0, 15])
        #expect(compliance.steps.map(\.secondsWithin) == [10, 0])
        #expect(compliance.steps[0].meanCadenceRPM == 80)
        // 80 rpm is more than 3 rpm under 85–95.
        #expect(compliance.steps[0].cadenceSecondsWithin == 0 && compliance.steps[0].cadenceSeconds == 10)
        #expect(compliance.compliancePercent == 50)
        #expect(compliance.completed)
        // A skip at 3.5 s: the second step starts in second 3.
        let skipped = PlanCompliance(
            samples[...], planned: planned, controls: [(3_500_000, .skip)], laps: [], startMicroseconds: 0)
        #expect(skipped.steps.map(\.startSecond) == [0, 3])
        #expect(skipped.steps.map(\.runningSeconds) == [3, 10])
        #expect(!skipped.completed || skipped.steps.last!.runningSeconds == 10)
    }
}

@Suite struct WorkoutTextTests {
    @Test func everyBuiltInWorkoutReadsBackFromItsText() throws {
        for (id, workout) in BuiltInWorkouts.all {
            #expect(try WorkoutText.parse(WorkoutText.text(workout)) == workout, "\(id)")
        }
    }

    @Test func theTextIsExactAndSaysEveryPart() throws {
        var step = WorkoutStep(
            .active, .meters(5000), .range(low: PowerLevel(hundredths: 7545, .ftp), high: .percent(80)),
            cadence: 85...95, heartRate: 140...150, name: "A = b\nc", scored: true)
        step.texts = [StepText(offsetSeconds: 30, "Go\\now")]
        let workout = StructuredWorkout(name: "N", author: "Me", description: "Two\nlines", steps: [step])
        let text = WorkoutText.text(workout)
        #expect(
            text == """
                # cyclelog workout 1
                name N
                author Me
                description Two\\nlines
                step active 5000m 75.45%-80% cadence=85-95 hr=140-150 scored name=A = b\\nc
                text 30 Go\\\\now

                """)
        #expect(try WorkoutText.parse(text) == workout)
    }

    @Test func aWrongLineIsNamed() {
        #expect(throws: WorkoutReadError("line 3", "a step's power is free, max, 90%, 250W, LOW-HIGH or FROM..TO")) {
            try WorkoutText.parse("# cyclelog workout 1\nname x\nstep active 60s 90.123%\n")
        }
        #expect(throws: WorkoutReadError("line 1", "is not '# cyclelog workout 1': this is not a cyclelog workout")) {
            try WorkoutText.parse("name x\n")
        }
    }
}
