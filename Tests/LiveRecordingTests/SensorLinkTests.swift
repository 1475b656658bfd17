import CyclingSensors
import Workouts
import XCTest

@testable import LiveRecording

/// The per-sensor link state machine and the auto-ride rules with a clock the test moves: the reconnect and
/// silence rules of the README ("Reconnect watchdog") in milliseconds, without a bus.
final class SensorLinkTests: XCTestCase {
    /// A clock that moves only when told.
    struct ManualClock {
        var now = Duration.zero
        mutating func advance(_ seconds: Double) { now += .milliseconds(Int64(seconds * 1000)) }
    }

    func testAFoundSensorIsConnectedSubscribedAndJournalledOnce() {
        var link = SensorLink()
        var clock = ManualClock()
        XCTAssertEqual(link.state, .searching)
        XCTAssertEqual(link.handle(.seen(connected: false), at: clock.now), [.connect(attempt: 1)])
        XCTAssertEqual(link.state, .connecting)
        // The next tick while the attempt is in flight starts no second one.
        clock.advance(0.5)
        XCTAssertEqual(link.handle(.seen(connected: true), at: clock.now), [])
        XCTAssertEqual(link.handle(.linkEstablished(attempt: 1), at: clock.now), [.journalLinkUp])
        XCTAssertEqual(link.handle(.subscribed(attempt: 1), at: clock.now), [])
        XCTAssertEqual(link.state, .streaming)
        XCTAssertTrue(link.isSubscribed)
        XCTAssertEqual(link.handle(.notification, at: clock.now), [], "the link is in the journal already")
    }

    func testFailedAttemptsBackOffOneTwoFourThenEveryFiveSeconds() {
        var link = SensorLink()
        var clock = ManualClock()
        var attemptTimes: [Double] = []
        var attempt = 0
        // Tick every 100 ms for 30 s; every attempt fails at once.
        for _ in 0..<300 {
            for action in link.handle(.seen(connected: false), at: clock.now) {
                guard case .connect(let number) = action else { continue }
                attempt = number
                attemptTimes.append(
                    Double(clock.now.components.seconds) + Double(clock.now.components.attoseconds) / 1e18)
                _ = link.handle(.failed(attempt: number), at: clock.now)
            }
            clock.advance(0.1)
        }
        let gaps = zip(attemptTimes.dropFirst(), attemptTimes).map { (($0 - $1) * 10).rounded() / 10 }
        XCTAssertEqual(Array(gaps.prefix(6)), [1, 2, 4, 5, 5, 5])
        XCTAssertEqual(link.state, .reconnecting)
        XCTAssertGreaterThan(attempt, 6)
    }

    func testASilentSensorIsResubscribedThenReconnected() {
        var link = SensorLink()
        var clock = ManualClock()
        _ = link.handle(.seen(connected: false), at: clock.now)
        _ = link.handle(.linkEstablished(attempt: 1), at: clock.now)
        _ = link.handle(.subscribed(attempt: 1), at: clock.now)
        // Four notifications a second for 5 s: a mean interval of 0.25 s, so silence counts after 3 s (the
        // minimum), not 5 × 0.25 s.
        for _ in 0..<20 {
            clock.advance(0.25)
            _ = link.handle(.notification, at: clock.now)
        }
        clock.advance(2.9)
        XCTAssertEqual(link.handle(.seen(connected: true), at: clock.now), [])
        clock.advance(0.2)
        XCTAssertEqual(
            link.handle(.seen(connected: true), at: clock.now), [.tell(.wentSilent), .resubscribe])
        XCTAssertEqual(link.state, .stale)
        clock.advance(2.9)
        XCTAssertEqual(link.handle(.seen(connected: true), at: clock.now), [])
        clock.advance(0.2)
        XCTAssertEqual(
            link.handle(.seen(connected: true), at: clock.now), [.tell(.stayedSilent), .journalLinkDown, .disconnect])
        XCTAssertEqual(link.state, .reconnecting)
        XCTAssertFalse(link.isSubscribed)
        // Connected again after the first back-off second.
        clock.advance(0.5)
        XCTAssertEqual(link.handle(.seen(connected: false), at: clock.now), [])
        clock.advance(0.6)
        XCTAssertEqual(link.handle(.seen(connected: false), at: clock.now), [.connect(attempt: 2)])
    }

    func testAReportOfAnAttemptThatBluetoothdsDepartureEndedChangesNothing() {
        var link = SensorLink()
        let clock = ManualClock()
        _ = link.handle(.seen(connected: false), at: clock.now)
        _ = link.handle(.linkEstablished(attempt: 1), at: clock.now)
        // bluetoothd leaves while attempt 1 is still reading the sensor.
        XCTAssertEqual(link.handle(.gone, at: clock.now), [.journalLinkDown])
        XCTAssertEqual(link.state, .searching)
        // Attempt 1 finishes late: it must not mark the sensor streaming on a link that no longer exists.
        XCTAssertEqual(link.handle(.subscribed(attempt: 1), at: clock.now), [])
        XCTAssertEqual(link.state, .searching)
        XCTAssertFalse(link.isSubscribed)
        XCTAssertNil(link.attemptInFlight)
    }

    func testALostLinkIsJournalledOnceWithWordsForTheRider() {
        var link = SensorLink()
        let clock = ManualClock()
        _ = link.handle(.seen(connected: false), at: clock.now)
        _ = link.handle(.subscribed(attempt: 1), at: clock.now)
        XCTAssertEqual(link.handle(.linkLost, at: clock.now), [.tell(.linkLost), .journalLinkDown])
        XCTAssertEqual(link.handle(.linkLost, at: clock.now), [])
        XCTAssertEqual(SensorLink.Notice.linkLost.text("Polar H10"), "Polar H10 disconnected: reconnecting")
        // Notifications BlueZ resumes on its own after a reconnect put the link back into the journal.
        XCTAssertEqual(link.handle(.notification, at: clock.now), [.journalLinkUp])
    }

    // MARK: record --auto

    func power(_ watts: Int16, crank: UInt16, at microseconds: Int64) -> RideEvent {
        var measurement = CyclingPowerMeasurement(instantaneousPower: watts)
        measurement.crankRevolutionData = CrankRevolutionData(
            cumulativeCrankRevolutions: crank, lastCrankEventTime: crank &* 1024)
        return RideEvent(
            timeMicroseconds: microseconds,
            .notification(sensor: "C0:11:22:33:44:55", characteristic: 0x2A63, value: measurement.encoded()))
    }

    func testPedallingOpensTheRideWithTheLastSecondsAndTheWatchRestartsByTheEventsClock() {
        var watch = PedallingWatch(
            configuration: .init(), descriptions: [], at: 0, lookbackSeconds: 3)
        // Ten seconds standing still (0 W, no crank turning), then pedalling at 200 W, one crank turn a second.
        var opened: [RideEvent]?
        var second: Int64 = 0
        while opened == nil && second < 30 {
            let event =
                second < 10
                ? power(0, crank: 0, at: second * 1_000_000)
                : power(200, crank: UInt16(second - 9), at: second * 1_000_000)
            opened = watch.add(event)
            second += 1
        }
        let events = try? XCTUnwrap(opened)
        XCTAssertNotNil(events)
        // Opened within a few seconds of the first pedal stroke, with at most the last 3 s of notifications.
        XCTAssertLessThanOrEqual(second, 14)
        let times = events?.map(\.timeMicroseconds) ?? []
        XCTAssertLessThanOrEqual((times.last ?? 0) - (times.first ?? 0), 3_000_000)
        XCTAssertFalse(watch.isDueForRestart)
        _ = watch.add(power(0, crank: 0, at: 601_000_000))
        XCTAssertTrue(watch.isDueForRestart, "ten minutes of the events' own time")
    }

    func testARideEndsAfterTheIdleTimeOnItsOwnClock() {
        var ending = IdleEnding(endAfterSeconds: 300, rideStartMicroseconds: 1_000_000_000)
        XCTAssertFalse(ending.isDue(at: 1_000_000_000 + 300_000_000))
        XCTAssertTrue(ending.isDue(at: 1_000_000_000 + 300_000_001))
        // Second 59 of the ride pedalled (its samples arrive later): the ride ends 300 s after that second's end.
        var samples = (0..<60).map { SecondSample(second: $0) }
        samples[59].powerWatts = 180
        samples[30].cadenceRPM = 85
        ending.saw(samples, originMicroseconds: 1_000_000_000)
        XCTAssertEqual(ending.lastPedallingMicroseconds, 1_060_000_000)
        XCTAssertFalse(ending.isDue(at: 1_360_000_000))
        XCTAssertTrue(ending.isDue(at: 1_360_000_001))
        // Seconds without power or cadence do not move it.
        ending.saw([SecondSample(second: 61)], originMicroseconds: 1_000_000_000)
        XCTAssertEqual(ending.lastPedallingMicroseconds, 1_060_000_000)
    }
}
