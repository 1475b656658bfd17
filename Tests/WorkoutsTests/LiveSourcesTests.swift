import XCTest

@testable import Workouts

/// The source of each channel at an instant, as the ride's 1 Hz series chooses it (SecondSample): a meter's power
/// and cadence before a trainer's, a wheel sensor's speed before a trainer's; a silent sensor gives way after the
/// 3 s a value holds.
final class LiveSourcesTests: XCTestCase {
    func reading(_ channel: Channel, _ value: Double, rank: Int) -> ChannelReading {
        ChannelReading(channel: channel, value: value, rank: rank)
    }

    func testAMeterAndATrainerTogetherShowTheMetersPowerAndCrankCadenceAndTheWheelSensorsSpeed() {
        var sources = LiveSources()
        let second: Int64 = 1_000_000
        // The trainer is heard first: alone, it is the source of all it sends.
        XCTAssertEqual(
            sources.take(
                [
                    reading(.powerWatts, 119, rank: SourceRank.fitnessMachinePower),
                    reading(.cadenceRPM, 90, rank: SourceRank.fitnessMachineCadence),
                    reading(.speedMetersPerSecond, 8.3, rank: SourceRank.fitnessMachineSpeed),
                ], from: "trainer", at: 0),
            [.powerWatts, .cadenceRPM, .speedMetersPerSecond])
        // The meter (power and crank cadence) and a speed sensor join.
        XCTAssertEqual(
            sources.take(
                [
                    reading(.powerWatts, 294, rank: SourceRank.cyclingPowerPower),
                    reading(.cadenceRPM, 104, rank: SourceRank.cyclingPowerCadence),
                ], from: "meter", at: second / 2),
            [.powerWatts, .cadenceRPM])
        XCTAssertEqual(
            sources.take([reading(.speedMetersPerSecond, 5.9, rank: SourceRank.cscSpeed)], from: "csc", at: second),
            [.speedMetersPerSecond])
        // The trainer's next notification is a second opinion on every channel: none of it is shown.
        XCTAssertEqual(
            sources.take(
                [
                    reading(.powerWatts, 120, rank: SourceRank.fitnessMachinePower),
                    reading(.cadenceRPM, 90, rank: SourceRank.fitnessMachineCadence),
                    reading(.speedMetersPerSecond, 8.3, rank: SourceRank.fitnessMachineSpeed),
                ], from: "trainer", at: 2 * second),
            [])
        // The meter falls silent: 3 s after its last value the trainer's power is shown again.
        XCTAssertEqual(
            sources.take(
                [reading(.powerWatts, 121, rank: SourceRank.fitnessMachinePower)], from: "trainer", at: 3 * second),
            [])
        XCTAssertEqual(
            sources.take(
                [reading(.powerWatts, 122, rank: SourceRank.fitnessMachinePower)], from: "trainer", at: 4 * second),
            [.powerWatts])
    }

    func testOfTwoAlikeTheOneHeardFirstIsShownAndADisconnectedOneGivesWay() {
        var sources = LiveSources()
        let strap = [reading(.heartRateBPM, 140, rank: SourceRank.heartRateStrap)]
        XCTAssertEqual(sources.take(strap, from: "strap-a", at: 0), [.heartRateBPM])
        XCTAssertEqual(sources.take(strap, from: "strap-b", at: 100), [])
        sources.forget("strap-a")
        XCTAssertEqual(sources.take(strap, from: "strap-b", at: 200), [.heartRateBPM])
    }
}
