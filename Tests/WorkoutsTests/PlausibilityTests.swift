import CyclingSensors
import XCTest

@testable import Workouts

/// The plausibility and gap rules (Docs/reference/workouts.md, "Only plausible numbers") on values worked out by hand.
final class PlausibilityTests: XCTestCase {
    func seconds(power: [Double?], heartRate: [Double?]? = nil) -> [SecondSample] {
        power.enumerated().map { index, watts in
            SecondSample(second: index, powerWatts: watts, heartRateBPM: heartRate?[index])
        }
    }

    func testValuesOutsideTheirChannelsRangeAreRejectedAndCounted() {
        var samples = [
            SecondSample(second: 0, powerWatts: 21_733, cadenceRPM: 90, heartRateBPM: 29_277),
            SecondSample(second: 1, powerWatts: -5, cadenceRPM: 400, speedMetersPerSecond: 50),
            SecondSample(second: 2, powerWatts: 250, cadenceRPM: 0, speedMetersPerSecond: 10, heartRateBPM: 0),
        ]
        let rejected = Plausibility.clean(&samples)
        XCTAssertEqual(rejected, [.powerWatts: 2, .heartRateBPM: 1, .cadenceRPM: 1, .speedMetersPerSecond: 1])
        XCTAssertEqual(samples.map(\.powerWatts), [nil, nil, 250])
        XCTAssertEqual(samples.map(\.cadenceRPM), [90, nil, 0])
        // A heart rate of 0 is "no strap": no value, and not counted as rejected.
        XCTAssertEqual(samples.map(\.heartRateBPM), [nil, nil, nil])
        XCTAssertEqual(samples.map(\.speedMetersPerSecond), [nil, nil, 10])
    }

    func testASpikeIsRejectedEverywhereNotOnlyInThePowerCurve() {
        // 200 W steady with one second of 1500 W: above 3 × 200 and 200 + 500 W, so a spike.
        var samples = seconds(power: [200, 200, 200, 200, 1500, 200, 200, 200, 200])
        XCTAssertEqual(Plausibility.clean(&samples), [.powerWatts: 1])
        let statistics = WorkoutStatistics(samples[...], elapsedSeconds: 9)
        XCTAssertEqual(statistics.maximumPowerWatts, 200)
        XCTAssertEqual(statistics.averagePowerWatts, 200)
        XCTAssertEqual(statistics.workJoules, 1600)
        XCTAssertEqual(statistics.powerCurveWatts[1], 200)
    }

    func testAGapIsLeftOutOfAveragePowerAndNPAlike() {
        // 40 s at 300 W, 20 s without power, 40 s at 300 W: both are 300 W (a gap is not 0 W of riding).
        let power: [Double?] =
            Array(repeating: 300, count: 40) + Array(repeating: nil, count: 20)
            + Array(repeating: 300, count: 40)
        let statistics = WorkoutStatistics(seconds(power: power)[...], elapsedSeconds: 100)
        XCTAssertEqual(statistics.averagePowerWatts, 300)
        XCTAssertEqual(try XCTUnwrap(statistics.normalizedPowerWatts), 300, accuracy: 1e-9)
        XCTAssertEqual(statistics.workJoules, 24_000)
        // The curve never spans the gap: 40 s is the longest stretch with power.
        XCTAssertEqual(WorkoutStatistics.powerCurve(seconds(power: power)).watts.count, 40)
    }

    func testABuiltRideRejectsAnImpossibleNotificationAndSaysHowMany() throws {
        var builder = WorkoutBuilder()
        for (second, watts) in [200, 200, 4000, 200, 200].enumerated() {
            let value = CyclingPowerMeasurement(instantaneousPower: Int16(watts)).encoded()
            builder.add(
                RideEvent(
                    timeMicroseconds: Int64(second) * 1_000_000,
                    .notification(sensor: "A", characteristic: 0x2A63, value: value)))
        }
        let workout = try XCTUnwrap(builder.finish())
        XCTAssertEqual(workout.rejectedSeconds, [.powerWatts: 1])
        XCTAssertEqual(workout.statistics.maximumPowerWatts, 200)
        XCTAssertEqual(workout.statistics.rejectedSeconds, [.powerWatts: 1])
    }
}
