/// How long notifications took from arrival to a committed database transaction, in 1 ms bins up to 10 s (and
/// one bin beyond), so a four-hour ride costs the same few kilobytes as a short one.
public struct LatencyHistogram: Sendable, Equatable {
    private static let binCount = 10_000
    private var counts = [Int](repeating: 0, count: binCount + 1)
    public private(set) var count = 0
    public private(set) var maximumSeconds = 0.0

    public init() {}

    public mutating func add(seconds: Double) {
        let bin = min(Self.binCount, max(0, Int((seconds * 1000).rounded(.down))))
        counts[bin] += 1
        count += 1
        maximumSeconds = max(maximumSeconds, seconds)
    }

    /// The upper edge of the bin holding the q-quantile (0…1), in seconds: never below the true value, at most
    /// 1 ms above it. Nil when nothing was added.
    public func quantileSeconds(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (bin, binCount) in counts.enumerated() {
            seen += binCount
            if seen >= rank { return bin == Self.binCount ? maximumSeconds : Double(bin + 1) / 1000 }
        }
        return maximumSeconds
    }
}
