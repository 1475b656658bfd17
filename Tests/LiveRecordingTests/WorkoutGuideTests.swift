import StructuredWorkouts
import Testing
import TrainerControl

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
            ]),
        ftpWatts: 200)

    @Test func eachStepIsToldAndAskedOfTheTrainerOnce() {
        var guide = WorkoutGuide(id: "g", planned: Self.planned)
        #expect(
            guide.advance(movingSeconds: 0, distanceMeters: 0, cadenceRPM: 90) == [
                .tell("step 1 of 3: 0:10 at 100 W"), .steer(.power(watts: 100)),
            ])
        #expect(guide.advance(movingSeconds: 3.5, distanceMeters: 0, cadenceRPM: 90) == [])
        #expect(guide.advance(movingSeconds: 4, distanceMeters: 0, cadenceRPM: 90) == [.tell("Settle in")])
        // A step without a target lets the trainer go.
        #expect(
            guide.advance(movingSeconds: 10, distanceMeters: 0, cadenceRPM: 90) == [
                .tell("step 2 of 3: 0:10 at free ride"), .steer(.mode(.free)),
            ])
        // A refusal (no trainer yet) is asked again at the next second.
        guide.trainerRefused()
        #expect(guide.advance(movingSeconds: 11, distanceMeters: 0, cadenceRPM: 90) == [.steer(.mode(.free))])
        #expect(guide.apply(.intensity(percent: 90)) == [])
        #expect(
            guide.apply(.skip) == [.tell("step 3 of 3: 1:00 at 270 W"), .steer(.power(watts: 270))])
        #expect(guide.status.stepIndex == 2 && guide.status.intensityPercent == 90)
        #expect(guide.status.profile.map(\.seconds) == [10, 10, 60])
        #expect(guide.status.profile.map(\.startWatts) == [90, nil, 270])
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
