import LiveRecording
import XCTest

final class LatencyHistogramTests: XCTestCase {
    func testQuantilesAreTheUpperEdgesOfTheirMillisecondBins() {
        var histogram = LatencyHistogram()
        XCTAssertNil(histogram.quantileSeconds(0.5))
        // 1 ms … 100 ms, one each (+0.4 ms inside each bin): the median is the 50th, the 99th percentile the 99th.
        for milliseconds in 1...100 { histogram.add(seconds: (Double(milliseconds) + 0.4) / 1000) }
        XCTAssertEqual(histogram.count, 100)
        XCTAssertEqual(histogram.quantileSeconds(0.5)!, 0.051, accuracy: 1e-9)
        XCTAssertEqual(histogram.quantileSeconds(0.99)!, 0.100, accuracy: 1e-9)
        XCTAssertEqual(histogram.quantileSeconds(1)!, 0.101, accuracy: 1e-9)
        XCTAssertEqual(histogram.maximumSeconds, 0.1004, accuracy: 1e-12)
    }

    func testDelaysBeyondTenSecondsAreKeptAsTheMaximum() {
        var histogram = LatencyHistogram()
        histogram.add(seconds: 0.002)
        histogram.add(seconds: 42)
        XCTAssertEqual(histogram.quantileSeconds(0.5)!, 0.003, accuracy: 1e-9)
        XCTAssertEqual(histogram.quantileSeconds(0.99)!, 42)
    }
}
