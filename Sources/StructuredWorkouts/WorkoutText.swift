import Formats

/// Why a workout file cannot be read: where (a line, an element, a byte) and why, in words a rider can act on.
/// A file that has one is refused whole: nothing of it is imported.
public struct WorkoutReadError: Error, Equatable, Sendable, CustomStringConvertible {
    public var place: String
    public var reason: String

    public init(_ place: String, _ reason: String) {
        self.place = place
        self.reason = reason
    }

    public var description: String { "\(place): \(reason)" }
}

/// The workout's canonical text: this project's own form, one line per fact, exact (integers only) and the same
/// for the same workout whatever file it came from. The library stores it, the journal's `workout` line carries
/// it so that a ride replays with its plan on a machine that never had the file, and a content digest is taken
/// over it.
///
///     # cyclelog workout 1
///     name Sweet spot 2×20
///     author cyclelog
///     description Two 20-minute efforts …
///     step warmup 600s 50%..75% cadence=85-95
///     text 30 Settle in
///     step active 1200s 88%-94%
///     step rest 300s 55%
///     step active open free name=Until you are ready
///     step active 5000m 250W hr=140-150 scored
///     step active 180s free grade=6%
///
/// A power is `free`, `max`, one level (`90%`, `250W`), a range `LOW-HIGH` or a ramp `FROM..TO`; a step's length
/// is `Ns`, `Nm` or `open`; `grade=` is a road grade in % for a trainer in simulation; `text` lines belong to the step above them; `name=` runs to the end of its line. Free
/// text escapes `\\`, `\n`, `\r` and other control characters, as the journal does.
public enum WorkoutText {
    public static let header = "# cyclelog workout 1"

    public static func text(_ workout: StructuredWorkout) -> String {
        var lines = [header, "name " + escaped(workout.name)]
        if let author = workout.author { lines.append("author " + escaped(author)) }
        if let description = workout.description { lines.append("description " + escaped(description)) }
        for step in workout.steps {
            var words = ["step", step.intensity.rawValue, lengthText(step.length), powerText(step.power)]
            if let cadence = step.cadence { words.append("cadence=" + rangeText(cadence)) }
            if let heartRate = step.heartRate { words.append("hr=" + rangeText(heartRate)) }
            if let grade = step.gradeHundredths { words.append("grade=" + PowerLevel.decimal(grade) + "%") }
            if step.scored { words.append("scored") }
            if let name = step.name { words.append("name=" + escaped(name)) }
            lines.append(words.joined(separator: " "))
            for text in step.texts { lines.append("text \(text.offsetSeconds) " + escaped(text.text)) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    public static func lengthText(_ length: WorkoutStep.Length) -> String {
        switch length {
        case .seconds(let seconds): "\(seconds)s"
        case .meters(let meters): "\(meters)m"
        case .open: "open"
        }
    }

    public static func powerText(_ power: PowerTarget) -> String {
        switch power {
        case .free: "free"
        case .maxEffort: "max"
        case .steady(let level): level.text
        case .range(let low, let high): "\(low.text)-\(high.text)"
        case .ramp(let from, let to): "\(from.text)..\(to.text)"
        }
    }

    static func rangeText(_ range: ClosedRange<Int>) -> String {
        range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)-\(range.upperBound)"
    }

    public static func parse(_ text: String) throws(WorkoutReadError) -> StructuredWorkout {
        guard text.utf8.count <= StructuredWorkout.maximumCanonicalTextBytes else {
            throw WorkoutReadError(
                "the workout",
                "its text is \(StructuredWorkout.byteCount(text.utf8.count)); a workout's is at most "
                    + StructuredWorkout.byteCount(StructuredWorkout.maximumCanonicalTextBytes))
        }
        // Split by scalar, not by character: a line feed followed by a combining mark is one character. Only LF
        // (and CR LF) ends a line: a name may hold U+2028.
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { scalars in
            Substring(scalars.last == "\r" ? scalars.dropLast() : scalars)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard lines.first == Substring(header) else {
            throw WorkoutReadError("line 1", "is not '\(header)': this is not a cyclelog workout")
        }
        var workout = StructuredWorkout(name: "", steps: [])
        var named = false
        for (index, line) in lines.enumerated().dropFirst() {
            let place = "line \(index + 1)"
            let (verb, rest) = split(line)
            switch verb {
            case "name":
                workout.name = unescaped(rest)
                named = true
            case "author": workout.author = unescaped(rest)
            case "description": workout.description = unescaped(rest)
            case "step":
                guard workout.steps.count < StructuredWorkout.maximumSteps else {
                    throw WorkoutReadError(place, "more than \(StructuredWorkout.maximumSteps) steps")
                }
                workout.steps.append(try step(rest, place))
            case "text":
                let (offset, message) = split(rest)
                guard let seconds = Int(offset), (0...StructuredWorkout.maximumStepSeconds).contains(seconds) else {
                    throw WorkoutReadError(place, "text needs its offset in seconds, then the message")
                }
                guard !workout.steps.isEmpty else { throw WorkoutReadError(place, "a text before any step") }
                workout.steps[workout.steps.count - 1].texts.append(
                    StepText(offsetSeconds: seconds, unescaped(message)))
            case "": continue
            default:
                throw WorkoutReadError(place, "unknown line '\(verb.prefix(20))'")
            }
        }
        guard named else { throw WorkoutReadError("line 2", "the workout has no name line") }
        try workout.checkLimits()
        return workout
    }

    static func step(_ text: Substring, _ place: String) throws(WorkoutReadError) -> WorkoutStep {
        var rest = text
        func next() -> Substring {
            let (word, remainder) = split(rest)
            rest = remainder
            return word
        }
        let intensityWord = next()
        guard let intensity = WorkoutStep.Intensity(rawValue: String(intensityWord)) else {
            throw WorkoutReadError(place, "'\(intensityWord.prefix(20))' is not warmup, active, rest or cooldown")
        }
        guard let length = length(next()) else {
            throw WorkoutReadError(place, "a step's length is Ns (seconds), Nm (metres) or open")
        }
        guard let power = power(next()) else {
            throw WorkoutReadError(place, "a step's power is free, max, 90%, 250W, LOW-HIGH or FROM..TO")
        }
        var step = WorkoutStep(intensity, length, power)
        while !rest.isEmpty {
            if rest.hasPrefix("name=") {
                step.name = unescaped(rest.dropFirst(5))
                break
            }
            let word = next()
            if word == "scored" {
                step.scored = true
            } else if word.hasPrefix("cadence="), let range = range(word.dropFirst(8), within: 1...250) {
                step.cadence = range
            } else if word.hasPrefix("hr="), let range = range(word.dropFirst(3), within: 25...250) {
                step.heartRate = range
            } else if word.hasPrefix("grade="), word.hasSuffix("%"),
                let grade = signedHundredths(word.dropFirst(6).dropLast()),
                StructuredWorkout.gradeHundredths.contains(grade)
            {
                step.gradeHundredths = grade
            } else {
                throw WorkoutReadError(
                    place, "'\(word.prefix(20))' is not cadence=A-B, hr=A-B, grade=G% (±40), scored or name=…")
            }
        }
        return step
    }

    static func length(_ word: Substring) -> WorkoutStep.Length? {
        if word == "open" { return .open }
        if word.hasSuffix("s"), let seconds = Int(word.dropLast()),
            (1...StructuredWorkout.maximumStepSeconds).contains(seconds)
        {
            return .seconds(seconds)
        }
        if word.hasSuffix("m"), let meters = Int(word.dropLast()), (1...1_000_000).contains(meters) {
            return .meters(meters)
        }
        return nil
    }

    static func power(_ word: Substring) -> PowerTarget? {
        if word == "free" { return .free }
        if word == "max" { return .maxEffort }
        if let dots = word.firstRange(of: "..") {
            guard let from = level(word[..<dots.lowerBound]), let to = level(word[dots.upperBound...]) else {
                return nil
            }
            return .ramp(from: from, to: to)
        }
        let parts = word.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let low = level(parts[0]), let high = level(parts[1]) else { return nil }
            return .range(low: low, high: high)
        }
        return level(word).map { .steady($0) }
    }

    /// `75.45%` or `250W`: at most two decimals, 0–1000 % or 0–3000 W.
    static func level(_ word: Substring) -> PowerLevel? {
        guard let unitCharacter = word.last else { return nil }
        let unit: PowerLevel.Unit
        switch unitCharacter {
        case "%": unit = .ftp
        case "W": unit = .watts
        default: return nil
        }
        guard let hundredths = hundredths(word.dropLast()) else { return nil }
        let limit = unit == .ftp ? 100_000 : 300_000
        guard (0...limit).contains(hundredths) else { return nil }
        return PowerLevel(hundredths: hundredths, unit)
    }

    /// A decimal with at most two places, as hundredths, read without floating point.
    static func hundredths(_ text: Substring) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        // At most nine digits: more is no level or grade, and would overflow once made hundredths.
        guard (1...2).contains(parts.count), parts[0].count <= 9, let whole = Int(parts[0]), whole >= 0,
            !parts[0].hasPrefix("+")
        else {
            return nil
        }
        guard parts.count == 2 else { return whole * 100 }
        let fraction = parts[1]
        guard (1...2).contains(fraction.count), fraction.allSatisfy(\.isASCII), let digits = Int(fraction),
            digits >= 0, !fraction.hasPrefix("+")
        else { return nil }
        return whole * 100 + (fraction.count == 1 ? digits * 10 : digits)
    }

    /// `-2.5` as −250.
    static func signedHundredths(_ text: Substring) -> Int? {
        text.hasPrefix("-") ? hundredths(text.dropFirst()).map { -$0 } : hundredths(text)
    }

    static func range(_ text: Substring, within bounds: ClosedRange<Int>) -> ClosedRange<Int>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let low = Int(parts[0]), let high = Int(parts[parts.count - 1]),
            bounds.contains(low), bounds.contains(high), low <= high
        else { return nil }
        return low...high
    }

    /// The first word and the rest, split at the first space scalar (a space followed by a combining mark is one
    /// character, and would hide the split from a search by character).
    static func split(_ line: Substring) -> (Substring, Substring) {
        let scalars = line.unicodeScalars
        guard let space = scalars.firstIndex(of: " ") else { return (line, "") }
        return (Substring(scalars[..<space]), Substring(scalars[scalars.index(after: space)...]))
    }

    /// Free text kept on its line (`ShownText.lineEscaped`, as the journal writes names).
    public static func escaped(_ text: String) -> String { ShownText.lineEscaped(text) }

    public static func unescaped(_ text: some StringProtocol) -> String { ShownText.lineUnescaped(text) }
}
