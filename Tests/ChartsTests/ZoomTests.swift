import Charts
import TestSupport
import XCTest

/// The part of a ride a chart shows, from any two integers a query carries.
final class ZoomTests: XCTestCase {
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
}
