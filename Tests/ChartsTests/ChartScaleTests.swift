import Charts
import Foundation
import Testing
import Workouts

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The list's power line, against arithmetic done by hand.
@Suite struct ChartScaleTests {
    /// Two minutes whose power is the second's number: 60 stretches of two seconds, stretch i the mean of 2i and
    /// 2i + 1.
    @Test func theSparklineIsTheMeanOfEachStretch() {
        let samples = (0..<120).map { SecondSample(second: $0, powerWatts: Double($0), runningFraction: 1) }
        let means = PowerSparkline.stretchMeansWatts(samples)
        #expect(means.count == 60)
        #expect(means.enumerated().allSatisfy { $0.element == Double(2 * $0.offset) + 0.5 })
    }

    /// Seconds without power are left out of a stretch's mean, and a stretch with none breaks the line; a ride
    /// shorter than the stretches has one per second.
    @Test func secondsWithoutPowerAreLeftOutAndAShortRideHasOneStretchPerSecond() {
        let watts: [Double?] = [100, nil, 300, nil, nil, nil, 50, 150]
        let samples = watts.enumerated().map {
            SecondSample(second: $0.offset, powerWatts: $0.element, runningFraction: 1)
        }
        #expect(PowerSparkline.stretchMeansWatts(samples) == watts)
        let long = (0..<240).map { SecondSample(second: $0, powerWatts: $0 < 4 ? nil : 200, runningFraction: 1) }
        let means = PowerSparkline.stretchMeansWatts(long)
        #expect(means.first == .some(nil))
        #expect(means.dropFirst().allSatisfy { $0 == 200 })
        let svg = PowerSparkline.svg(long)
        #expect(XMLParser(data: Data(svg.utf8)).parse())
    }
}
