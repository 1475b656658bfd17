/// One second of the 1 Hz series: time-weighted values of what the sensors held during it (Docs/reference/workouts.md).
/// A nil value is a gap (no sensor had a value), never an invented one.
public struct SecondSample: Equatable, Sendable {
    /// Seconds since the workout's start; the sample covers [second, second + 1).
    public var second: Int
    public var powerWatts: Double?
    public var cadenceRPM: Double?
    public var speedMetersPerSecond: Double?
    public var heartRateBPM: Double?
    /// Metres ridden during this second (0 while paused).
    public var distanceMeters: Double
    /// The part of this second on the timer (1 running, 0 paused; fractions at pause edges and at the end).
    public var runningFraction: Double
    /// Index into the workout's sensor list of the source of each channel's value, -1 for none.
    public var sources: ChannelSources

    public init(
        second: Int, powerWatts: Double? = nil, cadenceRPM: Double? = nil, speedMetersPerSecond: Double? = nil,
        heartRateBPM: Double? = nil, distanceMeters: Double = 0, runningFraction: Double = 1,
        sources: ChannelSources = [-1, -1, -1, -1]
    ) {
        self.second = second
        self.powerWatts = powerWatts
        self.cadenceRPM = cadenceRPM
        self.speedMetersPerSecond = speedMetersPerSecond
        self.heartRateBPM = heartRateBPM
        self.distanceMeters = distanceMeters
        self.runningFraction = runningFraction
        self.sources = sources
    }

    /// A second counts as moving when most of it was on the timer.
    public var isRunning: Bool { runningFraction >= 0.5 }

    public subscript(channel: Channel) -> Double? {
        get {
            switch channel {
            case .powerWatts: powerWatts
            case .cadenceRPM: cadenceRPM
            case .speedMetersPerSecond: speedMetersPerSecond
            case .heartRateBPM: heartRateBPM
            }
        }
        set {
            switch channel {
            case .powerWatts: powerWatts = newValue
            case .cadenceRPM: cadenceRPM = newValue
            case .speedMetersPerSecond: speedMetersPerSecond = newValue
            case .heartRateBPM: heartRateBPM = newValue
            }
        }
    }
}

/// Accumulates held values into 1-s bins: each source's value counts for the time it was held.
struct SecondBins {
    struct Contribution {
        var channel: Channel
        var sensorIndex: Int
        var rank: Int
        var weightedSum = 0.0
        var coveredMicroseconds: Int64 = 0
    }

    /// One second's contributions, every channel's in one list (a second has a handful: one per sensor and
    /// channel), each channel's in the order they came: one allocation a second rather than one per channel.
    struct Bin {
        var contributions: [Contribution] = []
        /// Distance per source: one sensor may count wheel revolutions twice (a power meter with wheel data that
        /// also offers the Cycling Speed and Cadence service), so a source is its sensor and its rank.
        var distance: [(sensorIndex: Int, rank: Int, meters: Double)] = []
    }

    let originMicroseconds: Int64
    /// The seconds still open: `bins[0]` is second `firstIndex`. A completed second is never added to again, so
    /// its bin is dropped (`dropBins(before:)`); a four-hour ride kept 14 400 of them, about 7 MB.
    private var bins: [Bin] = []
    private var firstIndex = 0

    init(originMicroseconds: Int64) {
        self.originMicroseconds = originMicroseconds
    }

    /// The bin of second `index`, made when missing; nil for a second already dropped.
    private mutating func slot(_ index: Int) -> Int? {
        let slot = index - firstIndex
        guard slot >= 0 else {
            assertionFailure("second \(index) was added to after it was completed")
            return nil
        }
        while bins.count <= slot { bins.append(Bin()) }
        return slot
    }

    /// Forgets the bins of the seconds before `index` (completed), a batch at a time.
    mutating func dropBins(before index: Int) {
        let count = min(index - firstIndex, bins.count)
        guard count >= 64 else { return }
        bins.removeFirst(count)
        firstIndex += count
    }

    /// Adds `value` held over [from, to) from one source; time before the origin is ignored.
    mutating func add(
        _ value: Double, channel: Channel, sensorIndex: Int, rank: Int, from: Int64, to: Int64
    ) {
        var start = max(from, originMicroseconds)
        guard to > start else { return }
        while start < to {
            let index = Int((start - originMicroseconds) / 1_000_000)
            let binEnd = originMicroseconds + Int64(index + 1) * 1_000_000
            let end = min(to, binEnd)
            let duration = end - start
            start = end
            guard let bin = slot(index) else { continue }
            if let slot = bins[bin].contributions.firstIndex(where: {
                $0.channel == channel && $0.sensorIndex == sensorIndex
            }) {
                bins[bin].contributions[slot].weightedSum += value * Double(duration)
                bins[bin].contributions[slot].coveredMicroseconds += duration
            } else {
                bins[bin].contributions.append(
                    Contribution(
                        channel: channel, sensorIndex: sensorIndex, rank: rank, weightedSum: value * Double(duration),
                        coveredMicroseconds: duration))
            }
        }
    }

    mutating func addDistance(_ meters: Double, sensorIndex: Int, rank: Int, at time: Int64) {
        guard time >= originMicroseconds else { return }
        guard let bin = slot(Int((time - originMicroseconds) / 1_000_000)) else { return }
        bins[bin].distance.append((sensorIndex, rank, meters))
    }

    /// The sample for bin `index`: per channel the preferred source that covered at least a quarter of the
    /// second (else the one that covered most, the first of equals), its time-weighted mean; distance from the
    /// speed source.
    func sample(_ index: Int, runningFraction: Double) -> SecondSample {
        var sample = SecondSample(second: index, runningFraction: runningFraction)
        guard index >= firstIndex, index - firstIndex < bins.count else { return sample }
        var speedSource: (sensorIndex: Int, rank: Int)?
        bins[index - firstIndex].contributions.withUnsafeBufferPointer { contributions in
            for channel in Channel.allCases {
                var preferred: Contribution?
                var most: Contribution?
                for candidate in contributions where candidate.channel == channel {
                    if candidate.coveredMicroseconds >= 250_000,
                        preferred.map({ (candidate.rank, candidate.sensorIndex) < ($0.rank, $0.sensorIndex) }) ?? true
                    {
                        preferred = candidate
                    }
                    if most.map({ $0.coveredMicroseconds < candidate.coveredMicroseconds }) ?? true {
                        most = candidate
                    }
                }
                guard let chosen = preferred ?? most else { continue }
                sample[channel] = chosen.weightedSum / Double(chosen.coveredMicroseconds)
                sample.sources[channel.rawValue] = Int8(clamping: chosen.sensorIndex)
                if channel == .speedMetersPerSecond { speedSource = (chosen.sensorIndex, chosen.rank) }
            }
        }
        let distance = bins[index - firstIndex].distance
        if runningFraction > 0, let source = speedSource ?? distance.first.map({ ($0.sensorIndex, $0.rank) }) {
            var meters = 0.0
            for part in distance where part.sensorIndex == source.sensorIndex && part.rank == source.rank {
                meters += part.meters
            }
            sample.distanceMeters = meters
        }
        return sample
    }
}

/// For each channel, in `Channel`'s order, an index into the workout's sensor list (−1 for none), held in place:
/// a second's sample is then plain data, copied without allocating or counting references (a 12-hour ride has
/// 43 200 of them, copied at every step from the builder to the store to a reader).
public struct ChannelSources: RandomAccessCollection, MutableCollection, Equatable, Sendable,
    ExpressibleByArrayLiteral
{
    private var power: Int8, cadence: Int8, speed: Int8, heartRate: Int8

    public init(arrayLiteral elements: Int8...) {
        self.init(elements)
    }

    /// From exactly one value per channel.
    public init(_ elements: [Int8]) {
        precondition(elements.count == 4, "one source per channel")
        (power, cadence, speed, heartRate) = (elements[0], elements[1], elements[2], elements[3])
    }

    public var startIndex: Int { 0 }
    /// The four channels (a literal: `Channel.allCases` would build an array at every use).
    public var endIndex: Int { 4 }

    public subscript(position: Int) -> Int8 {
        get {
            switch position {
            case 0: power
            case 1: cadence
            case 2: speed
            case 3: heartRate
            default: preconditionFailure("channel \(position) out of range")
            }
        }
        set {
            switch position {
            case 0: power = newValue
            case 1: cadence = newValue
            case 2: speed = newValue
            case 3: heartRate = newValue
            default: preconditionFailure("channel \(position) out of range")
            }
        }
    }
}
