import Testing

@testable import Workouts

/// A ride's trainer statistics against arithmetic done by hand.
@Suite struct TrainerStatisticsTests {
    let start: Int64 = 1_000_000_000

    @Test func timeInEachModeAndErgsMeanDifference() throws {
        // Ten running seconds: free for 2, ERG 200 W for 5 (powers 190, 210, 200, 220, none), then sim for 3;
        // a paused second in the ERG part counts nowhere.
        let powers: [Double?] = [150, 150, 190, 210, 200, 220, nil, 0, 120, 130, 140]
        var samples = powers.enumerated().map { SecondSample(second: $0.offset, powerWatts: $0.element) }
        samples[7].runningFraction = 0
        let targets: [(timeMicroseconds: Int64, target: TrainerTarget)] = [
            (start, .free),
            (start + 2_300_000, .erg(watts: 200)),  // within second 2: counts from it
            (start + 8_000_000, .simulation(gradeHundredthsPercent: 450)),
        ]
        let statistics = try #require(TrainerStatistics(samples[...], targets: targets, startMicroseconds: start))
        #expect(statistics.secondsByMode == ["free": 2, "erg": 5, "sim": 3])
        // |200 − 190| + |200 − 210| + 0 + |200 − 220| = 40 over 4 seconds with power.
        #expect(statistics.ergMeanAbsoluteDifferenceWatts == 10)
    }

    @Test func theTimeAnAppHeldTheTrainer() throws {
        // Ten seconds, the sixth paused: an app holds the trainer from 1.5 s (counted from second 1) to 4 s, and
        // another from 7 s on: seconds 1, 2, 3 and 7, 8, 9.
        var samples = (0..<10).map { SecondSample(second: $0, powerWatts: 200) }
        samples[5].runningFraction = 0
        let holders = [
            TrainerHolding(timeMicroseconds: start + 1_500_000, app: "00:AA:02:00:00:06", name: "iPad"),
            TrainerHolding(timeMicroseconds: start + 4_000_000, app: nil),
            TrainerHolding(timeMicroseconds: start + 7_000_000, app: "00:AA:02:00:00:08"),
            TrainerHolding(timeMicroseconds: start + 9_000_000, app: nil),
            TrainerHolding(timeMicroseconds: start + 9_000_001, app: "00:AA:02:00:00:06", name: "iPad"),
        ]
        let statistics = try #require(
            TrainerStatistics(samples[...], targets: [], holders: holders, startMicroseconds: start))
        #expect(statistics.appSeconds == 6)
        #expect(statistics.apps == ["iPad (00:AA:02:00:00:06)", "00:AA:02:00:00:08"])
        #expect(statistics.secondsByMode.isEmpty)
    }

    @Test func aRideThatAskedNothingHasNone() {
        let samples = [SecondSample(second: 0, powerWatts: 100)]
        #expect(TrainerStatistics(samples[...], targets: [], startMicroseconds: start) == nil)
    }

    @Test func theBuilderTakesTheJournalsTrainerLines() throws {
        var builder = WorkoutBuilder()
        let meter = "C0:11:22:33:44:01"
        builder.add(RideEvent(timeMicroseconds: start, .control(.start(WorkoutPlan()))))
        builder.add(RideEvent(timeMicroseconds: start, .setting(.trainerTarget(.erg(watts: 250)))))
        for second in 0..<10 {
            // Cycling Power Measurement, flags 0, 240 W.
            builder.add(
                RideEvent(
                    timeMicroseconds: start + Int64(second) * 1_000_000 + 500_000,
                    .notification(sensor: meter, characteristic: 0x2A63, value: [0, 0, 240, 0])))
        }
        builder.add(RideEvent(timeMicroseconds: start + 10_000_000, .control(.end)))
        let finished = builder.finish()
        let workout = try #require(finished)
        let trainer = try #require(workout.statistics.trainer)
        #expect(trainer.secondsByMode["erg"] ?? 0 >= 9)
        #expect(trainer.ergMeanAbsoluteDifferenceWatts == 10)
    }
}
