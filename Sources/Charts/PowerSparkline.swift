import Workouts

/// A ride's power as a small line for the list of rides: the mean power of each of up to `stretches` equal
/// stretches of the ride, on a scale from 0 to the highest of them. Seconds without power are left out of a
/// stretch's mean; a stretch with none breaks the line. Drawn on no background, in the page's accent colour.
public enum PowerSparkline {
    public static let stretches = 60
    static let width = 120.0, height = 28.0

    /// The mean power of each stretch (nil without power), oldest first; as many stretches as seconds for a ride
    /// shorter than `stretches` seconds. Stretch i holds the seconds from i·n/k up to (i + 1)·n/k.
    public static func stretchMeansWatts(_ samples: [SecondSample]) -> [Double?] {
        let count = min(stretches, samples.count)
        return (0..<count).map { index in
            var sum = 0.0, seconds = 0
            for sample in samples[index * samples.count / count..<(index + 1) * samples.count / count] {
                if let watts = sample.powerWatts {
                    sum += watts
                    seconds += 1
                }
            }
            return seconds > 0 ? sum / Double(seconds) : nil
        }
    }

    /// The picture; its root's `data-watts` lists the stretches' means to 0.1 W (empty for none), for scripts and
    /// tests.
    public static func svg(_ samples: [SecondSample]) -> String {
        let means = stretchMeansWatts(samples)
        var svg = SVG(width: width, height: height)
        svg.hasBackground = false
        svg.data = [
            ("watts", means.map { $0.map { String((($0 * 10).rounded()) / 10) } ?? "" }.joined(separator: " "))
        ]
        let highest = max(means.compactMap { $0 }.max() ?? 0, 1)
        let step = width / Double(max(means.count - 1, 1))
        svg.polyline(
            means.enumerated().map { index, watts in
                watts.map { (Double(index) * step, height - 1 - $0 / highest * (height - 2)) }
            }, stroke: "#ffb020", width: 1.5)
        return svg.document
    }
}
