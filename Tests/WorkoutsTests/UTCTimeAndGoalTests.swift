import Formats
import XCTest

@testable import Workouts

final class UTCTimeAndGoalTests: XCTestCase {
    func testTheSpecTimestampFormatsAndReadsBack() {
        // date -u -d @1714550400: 1 714 550 400 510 000 µs = 2024-05-01 08:00:00.510 UTC.
        XCTAssertEqual(UTCTime.format(microseconds: 1_714_550_400_510_000), "2024-05-01T08:00:00.510000Z")
        XCTAssertEqual(UTCTime.parse("2024-05-01T08:00:00.510000Z"), 1_714_550_400_510_000)
        XCTAssertEqual(UTCTime.parse("2024-05-01T08:00:00.51Z"), 1_714_550_400_510_000)
        XCTAssertEqual(UTCTime.parse("2024-05-01T08:00:00Z"), 1_714_550_400_000_000)
        XCTAssertEqual(UTCTime.formatSeconds(microseconds: 1_714_550_400_510_000), "2024-05-01T08:00:00Z")
    }

    func testCalendarEdges() {
        // 2024-02-29 (leap day) and 1969-12-31T23:59:59.5 (before the epoch).
        XCTAssertEqual(UTCTime.parse("2024-02-29T00:00:00Z"), 1_709_164_800_000_000)
        XCTAssertEqual(UTCTime.format(microseconds: -500_000), "1969-12-31T23:59:59.500000Z")
        XCTAssertEqual(UTCTime.parse("1969-12-31T23:59:59.500000Z"), -500_000)
        for text in ["2024-13-01T00:00:00Z", "2024-05-01 08:00:00Z", "2024-05-01T08:00:00", "x"] {
            XCTAssertNil(UTCTime.parse(text), text)
        }
    }

    /// The journal's writer keeps the last second's text: times within a second, across seconds, days and back
    /// again all come out as Python's datetime prints them.
    func testTheJournalsTimeWriterReusesASecondOnlyWithinIt() {
        let expected: [(Int64, String)] = [
            (1_714_550_400_510_000, "2024-05-01T08:00:00.510000Z"),
            (1_714_550_400_999_999, "2024-05-01T08:00:00.999999Z"),
            (1_714_550_401_000_001, "2024-05-01T08:00:01.000001Z"),
            (951_782_400_000_000, "2000-02-29T00:00:00.000000Z"),
            (951_868_799_999_999, "2000-02-29T23:59:59.999999Z"),
            (0, "1970-01-01T00:00:00.000000Z"),
            (-500_000, "1969-12-31T23:59:59.500000Z"),
            (1_714_550_401_000_001, "2024-05-01T08:00:01.000001Z"),
        ]
        var writer = UTCTime.Writer()
        for (microseconds, text) in expected {
            var output: [UInt8] = []
            writer.write(microseconds: microseconds, into: &output)
            XCTAssertEqual(String(decoding: output, as: UTF8.self), text)
        }
    }

    func testGoalsReadAsBikeComputersWriteThem() {
        XCTAssertEqual(WorkoutGoal("45m"), .timeSeconds(2700))
        XCTAssertEqual(WorkoutGoal("1h30m"), .timeSeconds(5400))
        XCTAssertEqual(WorkoutGoal("90s"), .timeSeconds(90))
        XCTAssertEqual(WorkoutGoal("30km"), .distanceMeters(30_000))
        XCTAssertEqual(WorkoutGoal("600kJ"), .energyJoules(600_000))
        for bad in ["", "abc", "45", "-5km", "0m", "1h30"] { XCTAssertNil(WorkoutGoal(bad), bad) }
        for goal in [WorkoutGoal.timeSeconds(2700), .distanceMeters(42_195), .energyJoules(600_000)] {
            XCTAssertEqual(WorkoutGoal(goal.description), goal)
        }
    }
}
