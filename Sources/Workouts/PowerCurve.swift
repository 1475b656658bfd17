import Concurrency

/// Mean-maximal power for every duration: `watts[d - 1]` is the best mean power over any d consecutive seconds.
/// A ride's curve is the pointwise maximum of its running segments' curves (a window never spans a pause, and a
/// dropout inside a segment counts as 0 W); the curve of a period is the pointwise maximum of its rides' curves.
public struct PowerCurve: Equatable, Sendable {
    /// Index d − 1 holds the best mean power over d seconds; the count is the longest duration covered.
    public var watts: [Double]

    public init(watts: [Double]) {
        self.watts = watts
    }

    /// The curve of a ride made of running segments of 1 Hz power (each already free of spikes).
    public init(segments: [[Double]]) {
        self = Self.pointwiseMaximum(segments.map { PowerCurve(watts: Self.meanMaximal($0)) }).curve
    }

    /// Best mean power over `seconds`, nil when no segment lasted that long.
    public func watts(seconds: Int) -> Double? {
        seconds >= 1 && seconds <= watts.count ? watts[seconds - 1] : nil
    }

    /// The best power held for at least each duration: max over d′ ≥ d of MMP(d′). Exact MMP can rise with
    /// duration (10, 0, 10 W: 5 W over 2 s, 6.67 W over 3 s); this form never does, which is what a chart of
    /// what a rider can hold should show.
    public var nonIncreasing: PowerCurve {
        var result = watts
        for index in result.indices.reversed().dropFirst() { result[index] = max(result[index], result[index + 1]) }
        return PowerCurve(watts: result)
    }

    /// Exact mean-maximal power of one 1 Hz series for every duration 1…N (negative watts count as 0).
    ///
    /// Window sums come from prefix sums. For each duration the window starts are taken in blocks, and a block is
    /// scanned only when an upper bound of its windows beats the best sum found so far. Power is never negative,
    /// so prefix sums never decrease and the bound is the prefix sum the block's last window ends on minus the one
    /// its first window starts on (the energy of the longest span the block's windows cover). The search starts
    /// from the previous duration's best window, which is almost always close to this duration's, so nearly every
    /// block is skipped. Rounding is monotone, so the bound is never below a window it covers: the result is exact.
    public static func meanMaximal(_ powerWatts: [Double]) -> [Double] {
        let count = powerWatts.count
        guard count > 0 else { return [] }
        var sums = [Double](repeating: 0, count: count + 1)
        for index in 0..<count { sums[index + 1] = sums[index] + max(0, powerWatts[index]) }
        let prefix = sums
        // Each duration's search stands alone (a seed only decides how many blocks are skipped), so a long series
        // shares its durations out in interleaved streams, one per core that is free: stream k takes durations
        // k + 1, k + 1 + streams, … and seeds each from its own previous one, which is nearly as close.
        let streams = count >= parallelFromSeconds ? 4 : 1
        let parts = parallelMap(streams) { stream in
            prefix.withUnsafeBufferPointer { sums in
                bestMeans(sums, from: stream + 1, step: streams)
            }
        }
        var curve = [Double](repeating: 0, count: count)
        for (stream, part) in parts.enumerated() {
            for (index, watts) in part.enumerated() { curve[stream + index * streams] = watts }
        }
        return curve
    }

    /// Below this many seconds a series' curve is computed on one core: sharing it out would cost more.
    static let parallelFromSeconds = 1800

    /// The best mean power over `first`, `first + step`, … seconds up to the series' length, from its prefix sums.
    private static func bestMeans(_ sums: UnsafeBufferPointer<Double>, from first: Int, step: Int) -> [Double] {
        let count = sums.count - 1
        let blockSize = 16, groupSize = 128
        var means: [Double] = []
        means.reserveCapacity(max(0, count - first) / step + 1)
        var bestStart = 0
        for duration in stride(from: first, through: count, by: step) {
            let lastStart = count - duration
            // Seed with the previous duration's best start, moved back if that window no longer fits.
            bestStart = min(bestStart, lastStart)
            var bestSum = sums[bestStart + duration] - sums[bestStart]
            // Two levels: a group of blocks is skipped whole when its bound fails, else its blocks one by one.
            var groupFirst = 0
            while groupFirst <= lastStart {
                let groupLast = min(groupFirst + groupSize - 1, lastStart)
                if sums[groupLast + duration] - sums[groupFirst] > bestSum {
                    var blockFirst = groupFirst
                    while blockFirst <= groupLast {
                        let last = min(blockFirst + blockSize - 1, groupLast)
                        if sums[last + duration] - sums[blockFirst] > bestSum {
                            for start in blockFirst...last {
                                let sum = sums[start + duration] - sums[start]
                                if sum > bestSum {
                                    bestSum = sum
                                    bestStart = start
                                }
                            }
                        }
                        blockFirst += blockSize
                    }
                }
                groupFirst += groupSize
            }
            means.append(bestSum / Double(duration))
        }
        return means
    }

    /// The pointwise maximum of several curves, and for each duration the index of the curve that gave it.
    public static func pointwiseMaximum(_ curves: [PowerCurve]) -> (curve: PowerCurve, sources: [Int]) {
        let length = curves.map(\.watts.count).max() ?? 0
        var watts = [Double](repeating: 0, count: length)
        var sources = [Int](repeating: -1, count: length)
        for (source, curve) in curves.enumerated() {
            for index in curve.watts.indices where curve.watts[index] > watts[index] || sources[index] < 0 {
                watts[index] = curve.watts[index]
                sources[index] = source
            }
        }
        return (PowerCurve(watts: watts), sources)
    }
}
