import Charts
import Foundation
import TestSupport
import WorkoutStore
import XCTest

@testable import Mirror

/// The mirror's bounds on its own: a zoom from any two integers is a part of the ride, the pairing limiter forgets
/// addresses that went away, and one address holds at most its share of connections.
final class MirrorLimitsTests: XCTestCase {
    /// The query's `from` and `to` as any two integers, a million times over, extremes first: never an overflow,
    /// always at least one of the ride's own seconds.
    func testAZoomIsAlwaysAPartOfTheRide() {
        let extremes = [Int.min, Int.min + 1, -1, 0, 1, 3599, 3600, 3601, 100_000_000_000, Int.max - 1, Int.max]
        var random = SplitMix64(seed: 38)
        var checked = 0
        func check(_ from: Int, _ to: Int, _ rideSeconds: Int) {
            let zoom = RideChart.zoom(from: from, to: to, rideSeconds: rideSeconds)
            let length = max(1, rideSeconds)
            // (Checked before asserting: a million XCTAssert calls would be most of the test's time.)
            if !(zoom.lowerBound >= 0 && zoom.upperBound <= length && zoom.count >= 1) {
                XCTFail("from \(from) to \(to) in \(rideSeconds) s: \(zoom)")
            }
            // Inside the ride, a zoom is what was asked.
            if 0 <= from && from < to && to <= length && zoom != from..<to { XCTFail("\(from)..<\(to) became \(zoom)") }
            checked += 1
        }
        for from in extremes {
            for to in extremes {
                for ride in [Int.min, 0, 1, 3600, Int.max] { check(from, to, ride) }
            }
        }
        while checked < 1_000_000 {
            let ride = Int(random.next() % 100_000)
            let pick = { (random: inout SplitMix64) -> Int in
                random.next() % 4 == 0 ? Int(bitPattern: UInt(random.next())) : Int(random.next() % 200_000) - 50_000
            }
            check(pick(&random), pick(&random), ride)
        }
    }

    /// Ten attempts a minute per address, and an address that tried once and went away is forgotten within a
    /// window, however many came: the table the README's limit keeps does not grow over the months a mirror runs.
    func testThePairingLimiterForgetsAddressesThatWentAway() async {
        let limiter = AttemptLimiter(limit: 10)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        for index in 0..<5000 {
            let allowed = await limiter.allow("10.0.\(index / 256).\(index % 256)", at: start)
            XCTAssertTrue(allowed)
        }
        let tracked = await limiter.trackedKeys
        XCTAssertEqual(tracked, 5000)
        for attempt in 0..<10 {
            let allowed = await limiter.allow("192.168.1.2", at: start.addingTimeInterval(61 + Double(attempt)))
            XCTAssertTrue(allowed)
        }
        let eleventh = await limiter.allow("192.168.1.2", at: start.addingTimeInterval(75))
        XCTAssertFalse(eleventh, "the eleventh attempt within a minute")
        let left = await limiter.trackedKeys
        XCTAssertEqual(left, 1, "the 5000 addresses of a minute ago are still kept")
        let later = await limiter.allow("192.168.1.2", at: start.addingTimeInterval(140))
        XCTAssertTrue(later, "a minute after its tenth attempt")
    }

    /// A history request whose client left before its turn came is not worked on at all (the reading that would
    /// have answered it never starts); one whose client stays is.
    func testARequestWhoseClientLeftIsNotWorkedOn() async throws {
        let database = try temporaryDatabase()
        XCTAssertEqual(
            try cyclelog([
                "replay", "--db", database,
                fixturesFolder.appendingPathComponent("rides/sweatpy_2020-06-01-16-52-40.journal").path,
            ]).status, 0)
        let worked = Worked()
        for gone in [true, false] {
            let exchange = HistoryAPI.Exchange(
                databasePath: database, url: "/api/v1/workouts", ifNoneMatch: nil, clientGone: { gone })
            let response = await exchange.read { store throws(StoreError) in
                worked.count()
                return .json(.integer(Int64(try store.list().count)))
            }
            XCTAssertEqual(response.status, gone ? .serviceUnavailable : .ok)
        }
        XCTAssertEqual(worked.times, 1, "only the request whose client stayed was worked on")
    }

    final class Worked: @unchecked Sendable {
        private let lock = NSLock()
        private var counted = 0
        func count() { lock.withLock { counted += 1 } }
        var times: Int { lock.withLock { counted } }
    }

    /// One address holds at most `perAddress` connections; closing one gives its place back, and an address with
    /// none open is not kept.
    func testOneAddressHoldsAtMostItsShareOfConnections() {
        let counts = ConnectionCounts(perAddress: 32)
        for _ in 0..<32 { XCTAssertTrue(counts.admit("192.168.1.50")) }
        XCTAssertFalse(counts.admit("192.168.1.50"))
        XCTAssertTrue(counts.admit("192.168.1.51"), "another address is not held up")
        counts.release("192.168.1.50")
        XCTAssertTrue(counts.admit("192.168.1.50"))
        for _ in 0..<32 { counts.release("192.168.1.50") }
        counts.release("192.168.1.51")
        counts.release("192.168.1.51")  // more than it held: nothing goes negative
        XCTAssertEqual(counts.count("192.168.1.50"), 0)
        XCTAssertEqual(counts.addresses, 0)
    }
}
