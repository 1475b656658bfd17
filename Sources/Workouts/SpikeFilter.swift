/// Removes power spikes before the power curve is computed; the stored 1 Hz series keeps them. A single corrupt
/// second of 2000 W would otherwise raise every curve value up to half a minute and, through the 3-minute
/// efforts, the FTP estimate.
public enum SpikeFilter {
    /// More than any rider has produced (track sprinters peak near 2500 W): such a second is not a measurement.
    public static let ceilingWatts = 3000.0
    /// How far a spike must stand out from its neighbours: above this many times their highest power…
    static let neighbourFactor = 3.0
    /// …and more than this many watts above it.
    static let neighbourMarginWatts = 500.0
    /// Seconds on each side that form a spike's neighbourhood.
    static let neighbourSeconds = 3

    /// The series with spikes replaced, and how many seconds were replaced. A run of one or two seconds is a spike
    /// when each of its seconds stands out from the highest power in the three seconds on either side (a real
    /// sprint ramps up and lasts longer); it becomes the mean of the two seconds around it. Seconds above the
    /// ceiling and negative seconds become 0 W, like a dropout.
    public static func filtered(_ watts: [Double]) -> (watts: [Double], replacedSeconds: Int) {
        var result = watts.map { $0 < 0 || $0 > ceilingWatts ? 0 : $0 }
        var replaced = zip(watts, result).filter { $0 != $1 }.count
        let clean = result
        var index = 0
        while index < clean.count {
            guard let length = spikeLength(clean, at: index) else {
                index += 1
                continue
            }
            let before = index > 0 ? clean[index - 1] : nil
            let after = index + length < clean.count ? clean[index + length] : nil
            let around = [before, after].compactMap { $0 }
            let fill = around.reduce(0, +) / Double(around.count)
            for spike in index..<(index + length) { result[spike] = fill }
            replaced += length
            index += length
        }
        return (result, replaced)
    }

    /// The seconds that are spikes (the one or two seconds that stand out, as `filtered` judges them).
    public static func spikeSeconds(_ watts: [Double]) -> [Int] {
        var seconds: [Int] = []
        var index = 0
        while index < watts.count {
            guard let length = spikeLength(watts, at: index) else {
                index += 1
                continue
            }
            seconds += index..<(index + length)
            index += length
        }
        return seconds
    }

    /// The length (1 or 2) of a spike starting at `index`, if one does.
    private static func spikeLength(_ watts: [Double], at index: Int) -> Int? {
        // Nothing under the margin can stand out by it; this skips almost every second cheaply.
        guard watts[index] > neighbourMarginWatts else { return nil }
        for length in 1...2 where index + length <= watts.count {
            let neighbours =
                watts[max(0, index - neighbourSeconds)..<index]
                + watts[(index + length)..<min(watts.count, index + length + neighbourSeconds)]
            guard let highest = neighbours.max() else { return nil }
            let threshold = max(highest * neighbourFactor, highest + neighbourMarginWatts)
            if watts[index..<(index + length)].allSatisfy({ $0 > threshold }) { return length }
        }
        return nil
    }
}
