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

/// Who holds a smart trainer from a time on (the journal's `hub-holder` lines): an app riding on the sensor hub,
/// whose targets the trainer then follows, or the rider again.
public struct TrainerHolding: Equatable, Sendable {
    public var timeMicroseconds: Int64
    /// The app's address; nil when the rider holds the trainer again.
    public var app: String?
    /// The name the app gave, when BlueZ had read one.
    public var name: String?

    public init(timeMicroseconds: Int64, app: String?, name: String? = nil) {
        self.timeMicroseconds = timeMicroseconds
        self.app = app
        self.name = name
    }

    /// The app as a rider recognises it: "Zwift (00:AA:…)", or its address alone.
    var appLabel: String? { app.map { app in name.map { "\($0) (\(app))" } ?? app } }
}

/// How a ride used its smart trainer: the running seconds in each mode asked for (by the rider, or by an app
/// through the sensor hub), in ERG how far the ride's power was from the target on average (the ride's power is
/// the best source's: a crank meter's when one was connected, else the trainer's own), and how long an app held it.
public struct TrainerStatistics: Equatable, Sendable {
    /// Running seconds per mode (`TrainerTarget.modes`); a ride that never asked for a mode has none.
    public var secondsByMode: [String: Int]
    /// Mean of |target − power| over the running ERG seconds with a power; nil without any.
    public var ergMeanAbsoluteDifferenceWatts: Double?
    /// Running seconds while an app on the sensor hub held the trainer.
    public var appSeconds: Int
    /// The apps that held the trainer, as a rider recognises each, in the order they first took it.
    public var apps: [String]

    public init(
        secondsByMode: [String: Int], ergMeanAbsoluteDifferenceWatts: Double?, appSeconds: Int = 0,
        apps: [String] = []
    ) {
        self.secondsByMode = secondsByMode
        self.ergMeanAbsoluteDifferenceWatts = ergMeanAbsoluteDifferenceWatts
        self.appSeconds = appSeconds
        self.apps = apps
    }

    /// From the samples, the targets and the trainer's holders in time order; nil when the ride asked nothing of a
    /// trainer and no app held one. A target or a holder counts from the second in which it came.
    public init?(
        _ samples: ArraySlice<SecondSample>, targets: [(timeMicroseconds: Int64, target: TrainerTarget)],
        holders: [TrainerHolding] = [], startMicroseconds: Int64
    ) {
        guard !targets.isEmpty || !holders.isEmpty else { return nil }
        var seconds: [String: Int] = [:]
        var differenceSum = 0.0
        var ergSeconds = 0
        var appSeconds = 0
        var (next, nextHolder) = (0, 0)
        var current: TrainerTarget?
        var appHolds = false
        for sample in samples where sample.isRunning {
            let end = startMicroseconds + Int64(sample.second + 1) * 1_000_000
            while next < targets.count, targets[next].timeMicroseconds < end {
                current = targets[next].target
                next += 1
            }
            while nextHolder < holders.count, holders[nextHolder].timeMicroseconds < end {
                appHolds = holders[nextHolder].app != nil
                nextHolder += 1
            }
            if appHolds { appSeconds += 1 }
            guard let current else { continue }
            seconds[current.mode, default: 0] += 1
            if case .erg(let watts) = current, let power = sample.powerWatts {
                differenceSum += abs(Double(watts) - power)
                ergSeconds += 1
            }
        }
        secondsByMode = seconds
        ergMeanAbsoluteDifferenceWatts = ergSeconds > 0 ? differenceSum / Double(ergSeconds) : nil
        self.appSeconds = appSeconds
        var apps: [String] = []
        for label in holders.compactMap(\.appLabel) where !apps.contains(label) { apps.append(label) }
        self.apps = apps
    }
}
