/// A structured workout: a plan of steps, each with a length and a target, that a rider follows (Zwift's `.zwo`,
/// the `.erg` and `.mrc` files of TrainerRoad and GoldenCheetah, Garmin's FIT workout files, this project's own
/// built-in ones). Every reader turns its file into this, and every writer and the player start from it.
///
/// Numbers are integers so that a workout written out and read back is equal to what it was: power in hundredths
/// of a percent of FTP or hundredths of a watt, lengths in whole seconds or metres.
public struct StructuredWorkout: Equatable, Sendable {
    public var name: String
    public var author: String?
    public var description: String?
    public var steps: [WorkoutStep]

    public init(name: String, author: String? = nil, description: String? = nil, steps: [WorkoutStep]) {
        self.name = name
        self.author = author
        self.description = description
        self.steps = steps
    }

    /// The planned duration, when every step is timed (nil when a step is open or a distance).
    public var totalSeconds: Int? {
        var total = 0
        for step in steps {
            guard case .seconds(let seconds) = step.length else { return nil }
            total += seconds
        }
        return total
    }

    /// Whether some target needs the rider's FTP to become watts.
    public var needsFTP: Bool { steps.contains { $0.power.needsFTP } }

    /// The most steps a workout may have: a generous bound for a real file, so that a hostile one cannot make the
    /// player or the journal hold millions.
    public static let maximumSteps = 10_000
    /// The longest step: a day.
    public static let maximumStepSeconds = 86_400
    /// A grade a step may ask for, in hundredths of a percent (±40 %, what a trainer's simulation is asked at most).
    public static let gradeHundredths = -4000...4000

    /// Bounds on the free text a workout carries, in UTF-8 bytes, and on its messages: far above any real file's
    /// (the longest description among real .zwo files is about 2 KB), so that a hostile file cannot make the
    /// library, a list of it or a ride's journal hold megabytes. Every way in holds them: the file readers, the
    /// canonical text (the library's rows, the journal's `workout` line) and the coach's plan.
    public static let maximumNameBytes = 500
    public static let maximumDescriptionBytes = 10_000
    /// A step's name and each of its messages.
    public static let maximumStepTextBytes = 1_000
    public static let maximumTextsPerStep = 100
    /// All the steps' names and messages together.
    public static let maximumAllStepTextBytes = 1_000_000
    /// The canonical text (`WorkoutText`) of a workout within every bound above is shorter than this: a longer one
    /// is refused before it is read.
    public static let maximumCanonicalTextBytes = 4_000_000

    /// Refuses a workout beyond a bound above, with the first one found.
    public func checkLimits() throws(WorkoutReadError) {
        if let violation = limitViolation() { throw violation }
    }

    /// Why the workout goes beyond a bound above (the first found), or nil.
    public func limitViolation() -> WorkoutReadError? {
        if steps.count > Self.maximumSteps {
            return WorkoutReadError("the workout", "more than \(Self.maximumSteps) steps")
        }
        if let reason = Self.textViolation(name, "name", Self.maximumNameBytes)
            ?? author.flatMap({ Self.textViolation($0, "author", Self.maximumNameBytes) })
            ?? description.flatMap({ Self.textViolation($0, "description", Self.maximumDescriptionBytes) })
        {
            return WorkoutReadError("the workout", reason)
        }
        var allStepTextBytes = 0
        for (index, step) in steps.enumerated() {
            let place = "step \(index + 1)"
            allStepTextBytes += (step.name?.utf8.count ?? 0) + step.texts.reduce(0) { $0 + $1.text.utf8.count }
            if allStepTextBytes > Self.maximumAllStepTextBytes {
                return WorkoutReadError(
                    place, "the steps' names and messages pass \(Self.byteCount(Self.maximumAllStepTextBytes)) in all")
            }
            if step.texts.count > Self.maximumTextsPerStep {
                return WorkoutReadError(place, "more than \(Self.maximumTextsPerStep) messages")
            }
            if let reason = step.name.flatMap({ Self.textViolation($0, "name", Self.maximumStepTextBytes) })
                ?? step.texts.lazy.compactMap({ Self.textViolation($0.text, "message", Self.maximumStepTextBytes) })
                .first
            {
                return WorkoutReadError(place, reason)
            }
        }
        return nil
    }

    /// "its description is 52 MB; a workout's is at most 10 KB", or nil within the bound.
    public static func textViolation(_ text: some StringProtocol, _ what: String, _ limit: Int) -> String? {
        let bytes = text.utf8.count
        guard bytes > limit else { return nil }
        return "its \(what) is \(byteCount(bytes)); a workout's \(what) is at most \(byteCount(limit))"
    }

    /// 600 bytes, 10.0 KB, 52.4 MB: a size as a rider reads it (decimal units, one decimal, rounded down so that a
    /// size just over a bound never reads as under it).
    public static func byteCount(_ bytes: Int) -> String {
        func tenths(_ unit: Int) -> String { "\(bytes / unit).\(bytes % unit * 10 / unit)" }
        return switch bytes {
        case ..<1_000: "\(bytes) bytes"
        case ..<1_000_000: tenths(1_000) + " KB"
        default: tenths(1_000_000) + " MB"
        }
    }
}

public struct WorkoutStep: Equatable, Sendable {
    /// What kind of effort the step is, as FIT's `intensity` and Zwift's element names say it.
    public enum Intensity: String, Equatable, Sendable, CaseIterable {
        case warmup, active, rest, cooldown
    }

    /// How long the step lasts: a time, a distance, or until the rider moves on (`skip`, or a lap press).
    public enum Length: Equatable, Sendable {
        case seconds(Int)
        case meters(Int)
        case open
    }

    public var intensity: Intensity
    public var length: Length
    public var power: PowerTarget
    /// The cadence to ride at, in rpm (a single value is a range of one).
    public var cadence: ClosedRange<Int>?
    /// The heart rate to ride at, in bpm.
    public var heartRate: ClosedRange<Int>?
    /// A road's grade to ride in simulation, in hundredths of a percent (450 is 4.5 %), for a step without a power
    /// target: a trainer is put in simulation at it.
    public var gradeHundredths: Int?
    public var name: String?
    /// Messages for the rider, by seconds into the step.
    public var texts: [StepText]
    /// The effort a fitness test scores (Zwift's `ftptest`).
    public var scored: Bool

    public init(
        _ intensity: Intensity, _ length: Length, _ power: PowerTarget, cadence: ClosedRange<Int>? = nil,
        heartRate: ClosedRange<Int>? = nil, gradeHundredths: Int? = nil, name: String? = nil, texts: [StepText] = [],
        scored: Bool = false
    ) {
        self.intensity = intensity
        self.length = length
        self.power = power
        self.cadence = cadence
        self.heartRate = heartRate
        self.gradeHundredths = gradeHundredths
        self.name = name
        self.texts = texts
        self.scored = scored
    }
}

/// A message shown to the rider `offsetSeconds` into its step.
public struct StepText: Equatable, Sendable {
    public var offsetSeconds: Int
    public var text: String

    public init(offsetSeconds: Int, _ text: String) {
        self.offsetSeconds = offsetSeconds
        self.text = text
    }
}

/// A power level: a share of the rider's FTP or a number of watts, in hundredths. Ordered by the number alone (a
/// range's two ends are of one unit).
public struct PowerLevel: Equatable, Hashable, Sendable, Comparable {
    public enum Unit: String, Equatable, Hashable, Sendable {
        case ftp, watts
    }

    /// Hundredths of a percent of FTP (7545 is 75.45 %), or hundredths of a watt.
    public var hundredths: Int
    public var unit: Unit

    public init(hundredths: Int, _ unit: Unit) {
        self.hundredths = hundredths
        self.unit = unit
    }

    /// `percent` % of FTP, kept to 0.01 %.
    public static func percent(_ percent: Double) -> PowerLevel {
        PowerLevel(hundredths: Int((percent * 100).rounded()), .ftp)
    }

    /// A share of FTP as Zwift writes it (0.75 is 75 %), kept to 0.01 %.
    public static func fraction(_ fraction: Double) -> PowerLevel {
        PowerLevel(hundredths: Int((fraction * 10_000).rounded()), .ftp)
    }

    public static func watts(_ watts: Double) -> PowerLevel {
        PowerLevel(hundredths: Int((watts * 100).rounded()), .watts)
    }

    /// In watts, given the FTP (nil when a share of FTP meets no FTP).
    public func watts(ftpWatts: Int?) -> Double? {
        switch unit {
        case .watts: return Double(hundredths) / 100
        case .ftp:
            guard let ftpWatts else { return nil }
            return Double(ftpWatts) * Double(hundredths) / 10_000
        }
    }

    public static func < (lhs: PowerLevel, rhs: PowerLevel) -> Bool { lhs.hundredths < rhs.hundredths }

    /// `75.45%`, `250W`: the shortest exact form.
    public var text: String {
        Self.decimal(hundredths) + (unit == .ftp ? "%" : "W")
    }

    /// `hundredths` / 100 with no trailing zeros: exact, no floating point.
    public static func decimal(_ hundredths: Int) -> String {
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = hundredths.magnitude
        let whole = magnitude / 100, fraction = magnitude % 100
        if fraction == 0 { return "\(sign)\(whole)" }
        let digits = fraction % 10 == 0 ? "\(fraction / 10)" : (fraction < 10 ? "0\(fraction)" : "\(fraction)")
        return "\(sign)\(whole).\(digits)"
    }
}

/// What power a step asks for.
public enum PowerTarget: Equatable, Sendable {
    /// No target: the rider rides as they like (Zwift's FreeRide; the trainer is let go).
    case free
    /// As hard as the rider can (Zwift's MaxEffort): no target either, but said so.
    case maxEffort
    case steady(PowerLevel)
    /// Anywhere between two levels: ridden at the midpoint, shown as the range, met anywhere inside it.
    case range(low: PowerLevel, high: PowerLevel)
    /// From one level to another over the step (a warm-up, a cool-down, a ramp): `from` is where it starts, which
    /// for a cool-down is the higher one.
    case ramp(from: PowerLevel, to: PowerLevel)

    public var needsFTP: Bool {
        switch self {
        case .free, .maxEffort: false
        case .steady(let level): level.unit == .ftp
        case .range(let a, let b), .ramp(let a, let b): a.unit == .ftp || b.unit == .ftp
        }
    }
}
