import CyclingSensors

/// How a trainer is steered: a target power (ERG), a simulated road (grade, wind, rolling and wind resistance),
/// a resistance level, or nothing (free: the trainer holds no target of ours).
public enum TrainerMode: String, CaseIterable, Sendable {
    case erg
    case simulation = "sim"
    case resistance
    case free

    /// What a rider calls it.
    public var shownName: String {
        switch self {
        case .erg: "ERG"
        case .simulation: "simulation"
        case .resistance: "resistance"
        case .free: "free"
        }
    }

    /// The Target Setting Features bit a trainer declares when it takes this mode (free needs none).
    var targetSetting: FitnessMachineFeature.TargetSetting? {
        switch self {
        case .erg: .power
        case .simulation: .indoorBikeSimulation
        case .resistance: .resistance
        case .free: nil
        }
    }
}

/// What a trainer declares it takes, read once it is connected: its features and the ranges of its targets
/// (FTMS: Fitness Machine Feature and the Supported … Range characteristics). Every target sent is held within them and rounded to their increments.
public struct TrainerCapabilities: Equatable, Sendable {
    public var features: FitnessMachineFeature?
    /// Watts.
    public var powerRange: SupportedRange?
    /// In 0.1 units of the trainer's own scale.
    public var resistanceRange: SupportedRange?
    /// In 0.1 %; a simulated grade is held within it when the trainer declares one.
    public var inclinationRange: SupportedRange?

    public init(
        features: FitnessMachineFeature?, powerRange: SupportedRange? = nil, resistanceRange: SupportedRange? = nil,
        inclinationRange: SupportedRange? = nil
    ) {
        self.features = features
        self.powerRange = powerRange
        self.resistanceRange = resistanceRange
        self.inclinationRange = inclinationRange
    }

    /// When a trainer takes power targets but declares no Supported Power Range (the spec makes it mandatory):
    /// the widest range a home trainer is sold with.
    public static let assumedPowerRange = SupportedRange(minimum: 0, maximum: 2000, minimumIncrement: 1)
    /// When it takes resistance targets but declares no range: level 0 to 10.0.
    static let assumedResistanceRange = SupportedRange(minimum: 0, maximum: 100, minimumIncrement: 1)
    /// A simulated grade without a declared inclination range: steeper than any road.
    static let assumedGradeHundredths: ClosedRange<Int> = -4000...4000

    /// Why the trainer cannot be steered in `mode`, or nil when it can.
    public func refusal(of mode: TrainerMode) -> String? {
        guard let setting = mode.targetSetting else { return nil }
        guard let features else {
            return "the trainer's features could not be read: cyclelog does not know whether it takes \(mode.shownName)"
        }
        guard features.supports(setting) else {
            let offered = TrainerMode.allCases.filter { $0.targetSetting.map(features.supports) == true }
                .map(\.shownName)
            return "the trainer does not take \(mode.shownName) (its features do not list it; it takes "
                + (offered.isEmpty ? "no target at all" : offered.joined(separator: " and ")) + ")"
        }
        return nil
    }

    /// `watts` held within the Supported Power Range and rounded to its increment.
    public func power(_ watts: Int) -> Int16 {
        Int16(truncatingIfNeeded: Self.fit(watts, in: powerRange ?? Self.assumedPowerRange))
    }

    /// The highest power the trainer takes that is at most `watts` (on its grid of increments), or its minimum.
    public func power(atMost watts: Int) -> Int16 {
        let range = powerRange ?? Self.assumedPowerRange
        var fitted = Self.fit(watts, in: range)
        if fitted > watts { fitted = max(Int(range.minimum), fitted - max(1, Int(range.minimumIncrement))) }
        return Int16(truncatingIfNeeded: fitted)
    }

    /// The trainer's power increment in watts (at least 1).
    public var powerIncrement: Int { max(1, Int((powerRange ?? Self.assumedPowerRange).minimumIncrement)) }

    /// A level as a percentage of the trainer's declared resistance range, in its 0.1 units, held within the
    /// range and within what the one-octet parameter carries (25.5).
    public func resistanceTenths(percent: Double) -> UInt8 {
        let range = resistanceRange ?? Self.assumedResistanceRange
        let share = min(max(percent.isFinite ? percent : 0, 0), 100) / 100
        let raw = Double(range.minimum) + share * Double(Int(range.maximum) - Int(range.minimum))
        let fitted = Self.fit(Int(raw.rounded()), in: range)
        return UInt8(clamping: fitted)
    }

    /// A grade in 0.01 % held within the declared inclination range (0.1 % units), or within ±40 %.
    public func gradeHundredths(percent: Double) -> Int16 {
        let wanted = Int(((percent.isFinite ? percent : 0) * 100).rounded())
        let bounds =
            inclinationRange.map { Int($0.minimum) * 10...max(Int($0.minimum), Int($0.maximum)) * 10 }
            ?? Self.assumedGradeHundredths
        return Int16(min(max(wanted, bounds.lowerBound), bounds.upperBound))
    }

    /// `value` within `range` and on its grid of increments from the minimum (an increment of 0 is taken as 1).
    static func fit(_ value: Int, in range: SupportedRange) -> Int {
        let lower = Int(range.minimum)
        let upper = max(lower, Int(range.maximum))
        let step = max(1, Int(range.minimumIncrement))
        let held = min(max(value, lower), upper)
        let steps = ((Double(held - lower) / Double(step)).rounded())
        let onGrid = lower + Int(steps) * step
        return onGrid > upper ? onGrid - step : onGrid
    }
}
