/// What the rider asked of a smart trainer, as the journal keeps it (`trainer erg 250`, `trainer sim 4.50`,
/// `trainer resistance 30`, `trainer free`): the mode and its target from that time on. The requests written to the
/// trainer (through ramps, the cadence safety and the power match) and its answers are journal lines of their own
/// (`write`, `notify … 2ad9`); this is the rider's intent, which a ride's trainer statistics are measured against.
public enum TrainerTarget: Equatable, Sendable {
    case erg(watts: Int)
    /// Grade in 0.01 %.
    case simulation(gradeHundredthsPercent: Int)
    /// A share of the trainer's declared range, in %.
    case resistance(percent: Int)
    case free

    /// `erg`, `sim`, `resistance` or `free`.
    public var mode: String {
        switch self {
        case .erg: "erg"
        case .simulation: "sim"
        case .resistance: "resistance"
        case .free: "free"
        }
    }

    public static let modes = ["erg", "sim", "resistance", "free"]

    /// What a rider may ask for, as the journal's `trainer` lines read it and the recorder's D-Bus commands take it.
    public static let ergWatts = 0...3000
    public static let gradePercent: ClosedRange<Double> = -40...40
    public static let resistancePercent = 0...100
}

/// How a ride used its smart trainer: the running seconds in each mode the rider asked for, and in ERG how far the
/// ride's power was from the rider's target on average (the ride's power is the best source's: a crank meter's
/// when one was connected, else the trainer's own).
public struct TrainerStatistics: Equatable, Sendable {
    /// Running seconds per mode (`TrainerTarget.modes`); a ride that never asked for a mode has none.
    public var secondsByMode: [String: Int]
    /// Mean of |target − power| over the running ERG seconds with a power; nil without any.
    public var ergMeanAbsoluteDifferenceWatts: Double?

    public init(secondsByMode: [String: Int], ergMeanAbsoluteDifferenceWatts: Double?) {
        self.secondsByMode = secondsByMode
        self.ergMeanAbsoluteDifferenceWatts = ergMeanAbsoluteDifferenceWatts
    }

    /// From the samples and the rider's targets in time order; nil when the ride asked nothing of a trainer. A
    /// target counts from the second in which it was asked for.
    public init?(
        _ samples: ArraySlice<SecondSample>, targets: [(timeMicroseconds: Int64, target: TrainerTarget)],
        startMicroseconds: Int64
    ) {
        guard !targets.isEmpty else { return nil }
        var seconds: [String: Int] = [:]
        var differenceSum = 0.0
        var ergSeconds = 0
        var next = 0
        var current: TrainerTarget?
        for sample in samples where sample.isRunning {
            let end = startMicroseconds + Int64(sample.second + 1) * 1_000_000
            while next < targets.count, targets[next].timeMicroseconds < end {
                current = targets[next].target
                next += 1
            }
            guard let current else { continue }
            seconds[current.mode, default: 0] += 1
            if case .erg(let watts) = current, let power = sample.powerWatts {
                differenceSum += abs(Double(watts) - power)
                ergSeconds += 1
            }
        }
        secondsByMode = seconds
        ergMeanAbsoluteDifferenceWatts = ergSeconds > 0 ? differenceSum / Double(ergSeconds) : nil
    }
}
