import XCTest

@testable import Workouts

/// The revolution rate from counters and event times worked by hand, and the rules for unchanged event times, resets
/// and jumps.
final class RevolutionRateTests: XCTestCase {
    /// Feeds two measurements one host second apart and returns the rate of the second.
    func rate(
        _ calculator: RevolutionRate, _ first: (UInt32, UInt16), _ second: (UInt32, UInt16), gapSeconds: Double = 1
    ) -> Double? {
        var calculator = calculator
        XCTAssertNil(calculator.update(revolutions: first.0, eventTime: first.1, atMicroseconds: 0))
        return calculator.update(
            revolutions: second.0, eventTime: second.1, atMicroseconds: Int64(gapSeconds * 1_000_000)
        )?.revolutionsPerSecond
    }

    func testCrankVectorsFromTheSpec() throws {
        // (42, 16384) → (44, 18432): 2 revolutions in 2048/1024 s = 60 rpm.
        XCTAssertEqual(try XCTUnwrap(rate(.crank(), (42, 16384), (44, 18432))) * 60, 60, accuracy: 1e-9)
        // Both counters wrap: (65535, 65000) → (1, 1000): 2 revolutions in 1536 ticks = 80 rpm.
        XCTAssertEqual(try XCTUnwrap(rate(.crank(), (65535, 65000), (1, 1000))) * 60, 80, accuracy: 1e-9)
        // OpenTracks' vector: 1 revolution in 1832 ticks = 33.537 rpm.
        XCTAssertEqual(try XCTUnwrap(rate(.crank(), (1, 6184), (2, 8016))) * 60, 60 * 1024 / 1832, accuracy: 1e-9)
        // Only the event time wraps: 1025 ticks, 59.94 rpm (not 60: no rounding to whole milliseconds).
        XCTAssertEqual(try XCTUnwrap(rate(.crank(), (1, 64511), (2, 0))) * 60, 60 * 1024 / 1025, accuracy: 1e-9)
    }

    func testWheelClocksDifferBetweenCSCAndCyclingPower() throws {
        let csc = RevolutionRate.wheel(ticksPerSecond: 1024, circumferenceMeters: 2.105)
        let cps = RevolutionRate.wheel(ticksPerSecond: 2048, circumferenceMeters: 2.105)
        // 3 revolutions of 2.105 m in 1.5 s = 4.21 m/s = 15.156 km/h, on either clock.
        XCTAssertEqual(try XCTUnwrap(rate(csc, (10000, 8192), (10003, 9728))) * 2.105, 4.21, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(rate(cps, (4660, 2048), (4663, 5120))) * 2.105, 4.21, accuracy: 1e-9)
    }

    func testAnUnchangedEventTimeHoldsTheRateThenFallsToZero() throws {
        var crank = RevolutionRate.crank()
        _ = crank.update(revolutions: 10, eventTime: 0, atMicroseconds: 0)
        let moving = try XCTUnwrap(crank.update(revolutions: 11, eventTime: 1024, atMicroseconds: 1_000_000))
        XCTAssertEqual(moving.revolutionsPerSecond * 60, 60, accuracy: 1e-9)
        XCTAssertEqual(moving.newRevolutions, 1)
        // Half a second later, no new revolution: 60 rpm still plausible (cap 1 rev / 0.5 s = 120 rpm).
        let held = try XCTUnwrap(crank.update(revolutions: 11, eventTime: 1024, atMicroseconds: 1_500_000))
        XCTAssertEqual(held.revolutionsPerSecond * 60, 60, accuracy: 1e-9)
        // 2.5 s without a revolution: the cap (24 rpm) is below half of 60 rpm: coasting, 0.
        let capped = try XCTUnwrap(crank.update(revolutions: 11, eventTime: 1024, atMicroseconds: 3_500_000))
        XCTAssertEqual(capped.revolutionsPerSecond, 0)
    }

    func testASlowCadenceSurvivesUntilTheTimeout() throws {
        var crank = RevolutionRate.crank()
        _ = crank.update(revolutions: 10, eventTime: 0, atMicroseconds: 0)
        // 40 rpm: one revolution every 1.5 s.
        _ = crank.update(revolutions: 11, eventTime: 1536, atMicroseconds: 1_500_000)
        let held = try XCTUnwrap(crank.update(revolutions: 11, eventTime: 1536, atMicroseconds: 2_500_000))
        XCTAssertEqual(held.revolutionsPerSecond * 60, 40, accuracy: 1e-9)
        let stopped = try XCTUnwrap(crank.update(revolutions: 11, eventTime: 1536, atMicroseconds: 4_600_000))
        XCTAssertEqual(stopped.revolutionsPerSecond, 0)
    }

    func testASensorResetIsABaselineNotASpike() {
        var wheel = RevolutionRate.wheel(ticksPerSecond: 1024, circumferenceMeters: 2.105)
        _ = wheel.update(revolutions: 50_000, eventTime: 1000, atMicroseconds: 0)
        // Battery swap: the 32-bit count restarts near 0. A decrease is never a wrap.
        XCTAssertNil(wheel.update(revolutions: 3, eventTime: 2000, atMicroseconds: 1_000_000))
        XCTAssertEqual(wheel.rejectedCount, 1)
        // The next measurement is measured against the new baseline.
        let next = wheel.update(revolutions: 5, eventTime: 3024, atMicroseconds: 2_000_000)
        XCTAssertEqual(next?.newRevolutions, 2)
    }

    func testAnImplausibleJumpIsRejected() {
        var crank = RevolutionRate.crank()
        _ = crank.update(revolutions: 100, eventTime: 0, atMicroseconds: 0)
        // 30 000 revolutions in a second would be 1.8 million rpm: a reconnect jump, not riding.
        XCTAssertNil(crank.update(revolutions: 30_100, eventTime: 1024, atMicroseconds: 1_000_000))
        // 251 rpm is above the 250-rpm limit as well.
        var fast = RevolutionRate.crank()
        _ = fast.update(revolutions: 0, eventTime: 0, atMicroseconds: 0)
        XCTAssertNil(fast.update(revolutions: 251, eventTime: 61_440, atMicroseconds: 60_000_000))
    }

    func testAGapLongerThanTheEventClockWrapStartsAgain() {
        var crank = RevolutionRate.crank()
        _ = crank.update(revolutions: 0, eventTime: 0, atMicroseconds: 0)
        // 70 s of silence: the 16-bit 1/1024-s clock wrapped at least once; the tick difference is ambiguous.
        XCTAssertNil(crank.update(revolutions: 70, eventTime: 4096, atMicroseconds: 70_000_000))
    }

    func testRevolutionsWithoutTimeContradictTheDefinition() {
        var crank = RevolutionRate.crank()
        _ = crank.update(revolutions: 5, eventTime: 500, atMicroseconds: 0)
        XCTAssertNil(crank.update(revolutions: 6, eventTime: 500, atMicroseconds: 1_000_000))
        XCTAssertEqual(crank.rejectedCount, 1)
    }
}
