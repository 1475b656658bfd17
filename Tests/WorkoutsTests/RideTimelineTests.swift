import CyclingSensors
import XCTest

@testable import Workouts

/// The time-jump rule (Docs/reference/workouts.md, "Clocks that jump") on event times worked out by hand.
final class RideTimelineTests: XCTestCase {
    let second: Int64 = 1_000_000
    let day: Int64 = 86_400_000_000
    /// 2021-03-18T13:00:00Z, a plausible ride start.
    let origin: Int64 = 1_616_072_400_000_000

    func events(_ offsets: [Int64]) -> [RideEvent] {
        offsets.map { RideEvent(timeMicroseconds: origin + $0, .disconnected(sensor: "A")) }
    }

    func times(_ repaired: RideTimeline.Repaired) -> [Int64] { repaired.events.map { $0.timeMicroseconds - origin } }

    func testTimesInOrderAreKeptAsTheyAreIncludingAGapOfHalfADay() {
        let offsets: [Int64] = [0, 1, 1, 2, 5, 5 + 12 * 3600].map { $0 * second }
        let repaired = RideTimeline.repair(events(offsets))
        XCTAssertEqual(times(repaired), offsets)
        XCTAssertEqual(repaired.faults, [])
        XCTAssertEqual(repaired.droppedCount, 0)
    }

    func testOneRecordDatedAYearLaterIsLeftOutAndNamed() {
        let offsets: [Int64] = [0, 1, 2, 2 + 365 * 86_400, 3, 4].map { $0 * second }
        let repaired = RideTimeline.repair(events(offsets))
        XCTAssertEqual(times(repaired), [0, 1, 2, 3, 4].map { $0 * second })
        XCTAssertEqual(repaired.indices, [0, 1, 2, 4, 5])
        XCTAssertEqual(repaired.faults.map(\.eventIndex), [3])
        XCTAssertTrue(repaired.faults[0].message.contains("365 days after"), repaired.faults[0].message)
    }

    func testOneRecordDatedSeventyOneMinutesLaterDoesNotSwallowTheRest() {
        // Bit 32 of a microsecond timestamp: 4 294 967 296 µs, 71 min 35 s.
        let offsets: [Int64] = [0, 1 * second, 2 * second + (1 << 32), 3 * second, 4 * second]
        let repaired = RideTimeline.repair(events(offsets))
        XCTAssertEqual(times(repaired), [0, 1, 3, 4].map { $0 * second })
        XCTAssertTrue(repaired.faults[0].message.contains("1 h 11 min after"), repaired.faults[0].message)
    }

    func testOneRecordDatedEarlierIsLeftOut() {
        let offsets: [Int64] = [0, 1, 2, -3600, 3, 4].map { $0 * second }
        let repaired = RideTimeline.repair(events(offsets))
        XCTAssertEqual(times(repaired), [0, 1, 2, 3, 4].map { $0 * second })
        XCTAssertTrue(repaired.faults[0].message.contains("1 h before"), repaired.faults[0].message)
    }

    func testAStrayLastEventFarInTheFutureIsLeftOut() {
        var input = events([0, 1, 2, 3].map { $0 * second })
        input.append(RideEvent(timeMicroseconds: 253_402_300_799_999_999, .control(.end)))
        let repaired = RideTimeline.repair(input)
        XCTAssertEqual(times(repaired), [0, 1, 2, 3].map { $0 * second })
        XCTAssertEqual(repaired.faults.map(\.eventIndex), [4])
    }

    func testAFewRecordsWeeksBeforeTheRideAreLeftOut() {
        // Three records, then the ride 27 days later (a device whose clock was set after the start).
        let offsets: [Int64] = [0, 1, 2].map { $0 * second } + (0..<100).map { 27 * day + $0 * second }
        let repaired = RideTimeline.repair(events(offsets))
        XCTAssertEqual(repaired.indices, Array(3..<103))
        XCTAssertEqual(repaired.events.first?.timeMicroseconds, origin + 27 * day)
        XCTAssertTrue(repaired.faults[0].message.contains("27 days before"), repaired.faults[0].message)
    }

    func testAClockThatStepsForwardDaysMidRideIsJoinedNotFilledIn() {
        let offsets: [Int64] = (0..<50).map { $0 * second } + (50..<100).map { 12 * day + $0 * second }
        let repaired = RideTimeline.repair(events(offsets))
        XCTAssertEqual(times(repaired), (0..<50).map { $0 * second } + (49..<99).map { $0 * second })
        XCTAssertEqual(repaired.faults.map(\.eventIndex), [50])
        XCTAssertTrue(repaired.faults[0].message.contains("12 days forward"), repaired.faults[0].message)
    }

    func testDatesOutsideWhatAJournalCanHoldAreLeftOut() {
        var input = events([0, 1, 2].map { $0 * second })
        input.insert(RideEvent(timeMicroseconds: .min, .disconnected(sensor: "A")), at: 1)
        input.insert(RideEvent(timeMicroseconds: .max, .disconnected(sensor: "A")), at: 3)
        let repaired = RideTimeline.repair(input)
        XCTAssertEqual(times(repaired), [0, 1, 2].map { $0 * second })
        XCTAssertEqual(repaired.droppedCount, 2)
        XCTAssertTrue(repaired.faults[0].message.contains("(2 events like it)"), repaired.faults[0].message)
    }

    func testAReversedStreamKeepsOnlyOneEvent() {
        let offsets: [Int64] = (0..<100).reversed().map { $0 * second / 4 }
        let repaired = RideTimeline.repair(events(offsets))
        XCTAssertEqual(repaired.events.count, 1)
        XCTAssertEqual(repaired.droppedCount, 99)
    }

    func testTheLongestRunInOrderIsFoundInAShuffle() {
        // 3 1 4 1 5 9 2 6: one longest non-decreasing run is 1 1 2 6 (or 3 4 5 9, or 1 1 5 6…): length 4.
        let run = RideTimeline.longestNonDecreasingRun([3, 1, 4, 1, 5, 9, 2, 6])
        XCTAssertEqual(run.count, 4)
        XCTAssertEqual(run, run.sorted())
        let values: [Int64] = [3, 1, 4, 1, 5, 9, 2, 6]
        XCTAssertTrue(zip(run, run.dropFirst()).allSatisfy { values[$0] <= values[$1] })
    }

    func testTheBuilderJoinsALiveClockThatLeapsInsteadOfFillingInTheGap() throws {
        var builder = WorkoutBuilder()
        let power = CyclingPowerMeasurement(instantaneousPower: 200).encoded()
        func notify(_ time: Int64) {
            builder.add(
                RideEvent(timeMicroseconds: time, .notification(sensor: "A", characteristic: 0x2A63, value: power)))
        }
        for step in 0..<10 { notify(origin + Int64(step) * second) }
        // An NTP step of 30 days: the builder must not build 2.6 million empty seconds.
        for step in 10..<20 { notify(origin + 30 * day + Int64(step) * second) }
        let workout = try XCTUnwrap(builder.finish())
        XCTAssertEqual(workout.samples.count, 18)
        XCTAssertEqual(builder.problems.count, 1)
        XCTAssertTrue(builder.problems[0].message.contains("30 days forward"), builder.problems[0].message)
    }
}
