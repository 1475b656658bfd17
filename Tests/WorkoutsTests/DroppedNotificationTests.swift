import CyclingSensors
import TestSupport
import XCTest

@testable import Workouts

/// A power meter whose notifications go missing now and then must not change the ride's numbers much: each value
/// holds until the next one (up to 3 s), as Docs/reference/workouts.md says.
final class DroppedNotificationTests: XCTestCase {
    func workout(_ watts: [Double], dropping: (Int) -> Bool) throws -> Workout {
        var builder = WorkoutBuilder(configuration: .init())
        for (second, value) in watts.enumerated() where !dropping(second) {
            let measurement = CyclingPowerMeasurement(instantaneousPower: Int16(value.rounded()))
            builder.add(
                RideEvent(
                    timeMicroseconds: Int64(second) * 1_000_000 + 250_000,
                    .notification(sensor: "C0:11:22:33:44:55", characteristic: 0x2A63, value: measurement.encoded())))
        }
        return try XCTUnwrap(builder.finish())
    }

    func testFivePercentOfNotificationsLostMovesNPAndTwentyMinutesByLessThanOnePercent() throws {
        for name in RideRecords.continuousRides {
            let watts = try RideRecords.watts(name)
            let full = try workout(watts) { _ in false }.statistics
            var lost = 0
            var random = SplitMix64(seed: 5)
            let dropped = try workout(watts) { second in
                let drop = second > 0 && random.next() % 100 < 5
                if drop { lost += 1 }
                return drop
            }.statistics
            XCTAssertEqual(Double(lost) / Double(watts.count), 0.05, accuracy: 0.01, "\(name): about 5 % lost")
            let np = try XCTUnwrap(full.normalizedPowerWatts), npDropped = try XCTUnwrap(dropped.normalizedPowerWatts)
            XCTAssertLessThan(abs(npDropped - np) / np, 0.01, name)
            let best20 = try XCTUnwrap(full.powerCurveWatts[1200])
            let best20Dropped = try XCTUnwrap(dropped.powerCurveWatts[1200])
            XCTAssertLessThan(abs(best20Dropped - best20) / best20, 0.01, name)
        }
    }
}
