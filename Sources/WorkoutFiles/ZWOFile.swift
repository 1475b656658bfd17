import Formats
import StructuredWorkouts

/// Zwift's workout file (`.zwo`): XML, a `workout` element whose children are the steps, powers as shares of FTP
/// (0.75 is 75 %), durations in seconds.
///
/// The readings that trip other readers: `PowerLow` is where a Warmup, Ramp or Cooldown *starts* (a cool-down's
/// is the higher one); a SteadyState with PowerLow ≠ PowerHigh is a range, not a ramp; IntervalsT's
/// PowerOnLow/PowerOnHigh ramp the on part; a text event inside IntervalsT is timed from the start of the whole
/// set; `Cadence="-1"` is no cadence; durations may be written as 420.00003.
public enum ZWOFile {
    public static func read(_ bytes: [UInt8]) throws(WorkoutReadError) -> StructuredWorkout {
        try WorkoutFormat.checkSize(bytes.count)
        let root = try XMLReader.document(bytes)
        guard root.lowercasedName == "workout_file" else {
            throw WorkoutReadError("line \(root.line)", "the root element is <\(root.name)>, not <workout_file>")
        }
        for key in ["sporttype", "sport_type", "sport"] {
            if let sport = root.child(key)?.text.withoutSurroundingWhitespace.lowercased(), !sport.isEmpty,
                sport != "bike"
            {
                throw WorkoutReadError(
                    "line \(root.child(key)!.line)", "a \(sport) workout, not a ride (sportType bike)")
            }
        }
        guard let list = root.child("workout") else {
            throw WorkoutReadError("line \(root.line)", "no <workout> element: the file has no steps")
        }
        var steps: [WorkoutStep] = []
        for element in list.children {
            steps += try self.steps(element)
            guard steps.count <= StructuredWorkout.maximumSteps else {
                throw WorkoutReadError("line \(element.line)", "more than \(StructuredWorkout.maximumSteps) steps")
            }
        }
        guard !steps.isEmpty else { throw WorkoutReadError("line \(list.line)", "the <workout> element has no steps") }
        let name = root.child("name")?.text.withoutSurroundingWhitespace ?? ""
        let workout = StructuredWorkout(
            name: name.isEmpty ? "Untitled workout" : name,
            author: root.child("author")?.text.withoutSurroundingWhitespace.nonEmpty,
            description: root.child("description")?.text.withoutSurroundingWhitespace.nonEmpty, steps: steps)
        try workout.checkLimits()
        return workout
    }

    private static func steps(_ element: XMLElement) throws(WorkoutReadError) -> [WorkoutStep] {
        let place = "<\(element.name)> on line \(element.line)"
        func number(_ name: String) throws(WorkoutReadError) -> Double? {
            guard let text = element.attribute(name.lowercased()) else { return nil }
            guard let value = Double(text) ?? Double(text.withoutSurroundingWhitespace), value.isFinite else {
                throw WorkoutReadError(place, "\(name)=\"\(text.prefix(20))\" is not a number")
            }
            return value
        }
        func seconds(_ name: String) throws(WorkoutReadError) -> Int {
            guard let value = try number(name) else { throw WorkoutReadError(place, "has no \(name)") }
            guard value >= 0, value <= Double(StructuredWorkout.maximumStepSeconds) else {
                throw WorkoutReadError(place, "\(name)=\(value) is not 0 to \(StructuredWorkout.maximumStepSeconds) s")
            }
            return Int(value.rounded())
        }
        func level(_ name: String) throws(WorkoutReadError) -> PowerLevel? {
            guard let value = try number(name) else { return nil }
            guard (0...10).contains(value) else {
                throw WorkoutReadError(place, "\(name)=\(value) is not a share of FTP (0 to 10, 1 is 100 %)")
            }
            return .fraction(value)
        }
        func cadence(_ name: String) throws(WorkoutReadError) -> ClosedRange<Int>? {
            guard let value = try number(name), value > 0 else { return nil }  // -1: none
            guard value >= 0.5, value < 250.5 else {
                throw WorkoutReadError(place, "\(name)=\(value) is not a cadence")
            }
            let rpm = Int(value.rounded())
            return rpm...rpm
        }
        func stepCadence() throws(WorkoutReadError) -> ClosedRange<Int>? {
            if let low = try cadence("CadenceLow"), let high = try cadence("CadenceHigh") {
                return min(low.lowerBound, high.lowerBound)...max(low.upperBound, high.upperBound)
            }
            return try cadence("Cadence")
        }
        let texts = try textEvents(element)
        let kind = element.lowercasedName
        switch kind {
        case "warmup", "ramp", "cooldown":
            let duration = try seconds("Duration")
            let power: PowerTarget
            if let from = try level("PowerLow"), let to = try level("PowerHigh") {
                power = from == to ? .steady(from) : .ramp(from: from, to: to)
            } else if let steady = try level("Power") {
                power = .steady(steady)
            } else {
                throw WorkoutReadError(place, "has neither PowerLow and PowerHigh nor Power")
            }
            let intensity: WorkoutStep.Intensity = kind == "warmup" ? .warmup : kind == "cooldown" ? .cooldown : .active
            return timed(
                [WorkoutStep(intensity, .seconds(duration), power, cadence: try stepCadence())], [duration], texts)
        case "steadystate", "solidstate":
            let duration = try seconds("Duration")
            let power: PowerTarget
            if let steady = try level("Power") {
                power = .steady(steady)
            } else if let low = try level("PowerLow"), let high = try level("PowerHigh") {
                power = low == high ? .steady(low) : .range(low: min(low, high), high: max(low, high))
            } else {
                throw WorkoutReadError(place, "has neither Power nor PowerLow and PowerHigh")
            }
            return timed(
                [WorkoutStep(.active, .seconds(duration), power, cadence: try stepCadence())], [duration], texts)
        case "freeride":
            let duration = try seconds("Duration")
            let scored = element.attribute("ftptest").map { $0.withoutSurroundingWhitespace == "1" } ?? false
            return timed(
                [WorkoutStep(.active, .seconds(duration), .free, cadence: try stepCadence(), scored: scored)],
                [duration], texts)
        case "maxeffort":
            let duration = try seconds("Duration")
            return timed([WorkoutStep(.active, .seconds(duration), .maxEffort)], [duration], texts)
        case "intervalst":
            let count = try number("Repeat") ?? 1
            guard count >= 0.5, count < 1000.5 else { throw WorkoutReadError(place, "Repeat is not 1 to 1000") }
            let repeats = Int(count.rounded())
            let on = try seconds("OnDuration"), off = try seconds("OffDuration")
            func part(_ steady: String, _ low: String, _ high: String) throws(WorkoutReadError) -> PowerTarget {
                if let from = try level(low), let to = try level(high) {
                    return from == to ? .steady(from) : .ramp(from: from, to: to)
                }
                guard let level = try level(steady) else {
                    throw WorkoutReadError(place, "has neither \(steady) nor \(low) and \(high)")
                }
                return .steady(level)
            }
            let onPower = try part("OnPower", "PowerOnLow", "PowerOnHigh")
            let offPower = try part("OffPower", "PowerOffLow", "PowerOffHigh")
            let onCadence = try cadence("Cadence"), offCadence = try cadence("CadenceResting")
            var steps: [WorkoutStep] = []
            var lengths: [Int] = []
            for _ in 0..<repeats {
                steps.append(WorkoutStep(.active, .seconds(on), onPower, cadence: onCadence))
                steps.append(WorkoutStep(.rest, .seconds(off), offPower, cadence: offCadence))
                lengths += [on, off]
            }
            return timed(steps, lengths, texts)
        default:
            throw WorkoutReadError(
                place,
                "is not a workout step cyclelog knows (Warmup, Ramp, Cooldown, SteadyState, "
                    + "IntervalsT, FreeRide, MaxEffort)")
        }
    }

    /// The text events of an element, by seconds from its start.
    private static func textEvents(_ element: XMLElement) throws(WorkoutReadError) -> [StepText] {
        var texts: [StepText] = []
        for child in element.children where child.lowercasedName == "textevent" {
            let place = "<textevent> on line \(child.line)"
            guard let offsetText = child.attribute("timeoffset"),
                let offset = Double(offsetText) ?? Double(offsetText.withoutSurroundingWhitespace),
                offset >= 0, offset <= Double(StructuredWorkout.maximumStepSeconds)
            else {
                throw WorkoutReadError(place, "has no timeoffset of 0 to \(StructuredWorkout.maximumStepSeconds) s")
            }
            let message = child.attribute("message") ?? child.text.withoutSurroundingWhitespace
            texts.append(StepText(offsetSeconds: Int(offset.rounded()), message))
        }
        return texts
    }

    /// The steps with each text event given to the step it falls in (timed from the start of them all); an
    /// offset past the end stays with the last step.
    private static func timed(_ steps: [WorkoutStep], _ lengths: [Int], _ texts: [StepText]) -> [WorkoutStep] {
        var steps = steps
        for text in texts {
            var start = 0
            var index = 0
            while index + 1 < lengths.count, text.offsetSeconds >= start + lengths[index] {
                start += lengths[index]
                index += 1
            }
            // Past the last step's end it stays with the last step, said at most a day into it.
            steps[index].texts.append(
                StepText(
                    offsetSeconds: min(text.offsetSeconds - start, StructuredWorkout.maximumStepSeconds), text.text))
        }
        return steps.filter { $0.length != .seconds(0) }
    }

    // MARK: - Writing

    /// The workout as a `.zwo` file. Distances and open steps have no form in it: such a workout is refused by
    /// name. Steps ridden as intervals (an on step then a rest, repeated) are written as one IntervalsT. A step's
    /// grade has no form either: such a step is a FreeRide.
    public static func write(_ workout: StructuredWorkout) throws(WorkoutReadError) -> [UInt8] {
        var lines = ["<workout_file>"]
        if let author = workout.author { lines.append("  <author>\(escaped(author))</author>") }
        lines.append("  <name>\(escaped(workout.name))</name>")
        if let description = workout.description {
            lines.append("  <description>\(escaped(description))</description>")
        }
        lines.append("  <sportType>bike</sportType>")
        lines.append("  <workout>")
        var index = 0
        let steps = workout.steps
        while index < steps.count {
            let step = steps[index]
            guard case .seconds(let duration) = step.length else {
                throw WorkoutReadError(
                    "step \(index + 1)", "is \(WorkoutText.lengthText(step.length)): a .zwo step is a time only")
            }
            if step.power.hasFTPShareOnly == false {
                throw WorkoutReadError("step \(index + 1)", "asks for watts: a .zwo file has shares of FTP only")
            }
            let repeats = intervalRepeats(steps, from: index)
            if repeats > 0, case .seconds(let off) = steps[index + 1].length {
                let rest = steps[index + 1]
                var attributes = [
                    "Repeat=\"\(repeats)\"", "OnDuration=\"\(duration)\"", "OffDuration=\"\(off)\"",
                ]
                attributes += intervalPower(step.power, "OnPower", "PowerOnLow", "PowerOnHigh")
                attributes += intervalPower(rest.power, "OffPower", "PowerOffLow", "PowerOffHigh")
                if let cadence = step.cadence { attributes.append("Cadence=\"\(cadence.lowerBound)\"") }
                if let cadence = rest.cadence { attributes.append("CadenceResting=\"\(cadence.lowerBound)\"") }
                var texts: [StepText] = []
                for offset in 0..<(2 * repeats) {
                    let start = (offset / 2) * (duration + off) + (offset % 2 == 1 ? duration : 0)
                    texts += steps[index + offset].texts.map {
                        StepText(offsetSeconds: start + $0.offsetSeconds, $0.text)
                    }
                }
                lines += element("IntervalsT", attributes, texts)
                index += 2 * repeats
                continue
            }
            var attributes = ["Duration=\"\(duration)\""]
            let name: String
            switch step.power {
            case .free:
                name = "FreeRide"
                if step.scored { attributes.append("ftptest=\"1\"") }
            case .maxEffort:
                name = "MaxEffort"
            case .steady(let level):
                name = step.intensity == .warmup ? "Warmup" : step.intensity == .cooldown ? "Cooldown" : "SteadyState"
                attributes +=
                    name == "SteadyState"
                    ? ["Power=\"\(share(level))\""] : ["PowerLow=\"\(share(level))\"", "PowerHigh=\"\(share(level))\""]
            case .range(let low, let high):
                // A warm-up or cool-down's PowerLow/PowerHigh is a ramp: a range is a SteadyState's (`losses`).
                name = "SteadyState"
                attributes += ["PowerLow=\"\(share(low))\"", "PowerHigh=\"\(share(high))\""]
            case .ramp(let from, let to):
                name = step.intensity == .warmup ? "Warmup" : step.intensity == .cooldown ? "Cooldown" : "Ramp"
                attributes += ["PowerLow=\"\(share(from))\"", "PowerHigh=\"\(share(to))\""]
            }
            if let cadence = step.cadence {
                attributes +=
                    cadence.lowerBound == cadence.upperBound
                    ? ["Cadence=\"\(cadence.lowerBound)\""]
                    : ["CadenceLow=\"\(cadence.lowerBound)\"", "CadenceHigh=\"\(cadence.upperBound)\""]
            }
            lines += element(name, attributes, step.texts)
            index += 1
        }
        lines.append("  </workout>")
        lines.append("</workout_file>")
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// The workout as a `.zwo` carries it, for a workout read from one: what `read(write(w))` gives, to compare a
    /// round trip with (a character XML 1.0 does not allow is left out).
    public static func asWritten(_ workout: StructuredWorkout) -> StructuredWorkout {
        func kept(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.filter(allowed)))
        }
        // Read back as a .zwo is read: the name, author and description without surrounding white space.
        var copy = workout
        copy.name = kept(workout.name).withoutSurroundingWhitespace.nonEmpty ?? "Untitled workout"
        copy.author = workout.author.flatMap { kept($0).withoutSurroundingWhitespace.nonEmpty }
        copy.description = workout.description.flatMap { kept($0).withoutSurroundingWhitespace.nonEmpty }
        for index in copy.steps.indices {
            copy.steps[index].texts = copy.steps[index].texts.map {
                StepText(offsetSeconds: $0.offsetSeconds, kept($0.text))
            }
        }
        return copy
    }

    /// Whether XML 1.0 allows the character (§2.2, `Char`).
    static func allowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// What writing `workout` as a `.zwo` leaves out or changes, in words; empty when it keeps all of it. (What
    /// it cannot write at all — watts, distances, open steps — `write` refuses by name.)
    public static func losses(_ workout: StructuredWorkout) -> [String] {
        func count(_ what: String, _ test: (WorkoutStep) -> Bool) -> String? {
            WorkoutFormat.loss(what, workout.steps, test)
        }
        return [
            count("heart-rate targets (a .zwo has none)") { $0.heartRate != nil },
            count("step names (a .zwo step has none)") { $0.name != nil },
            count("grades: those steps are FreeRides") { $0.gradeHundredths != nil },
            count("which steps a test scores, but for a free ride's (ftptest)") {
                $0.scored && $0.power != .free
            },
            count("the intensity of warm-ups and cool-downs with a range, written as SteadyStates") { step in
                guard step.intensity == .warmup || step.intensity == .cooldown else { return false }
                if case .range = step.power { return true }
                return false
            },
        ].compactMap { $0 }
    }

    /// How many (on, rest) pairs from `index` an IntervalsT can carry exactly: an active step then a rest step,
    /// both timed, steady or ramped, with single-value cadences, repeated identically (texts aside); 0 for none.
    static func intervalRepeats(_ steps: [WorkoutStep], from index: Int) -> Int {
        func fits(_ step: WorkoutStep) -> Bool {
            guard case .seconds = step.length, !step.scored, step.heartRate == nil, step.name == nil else {
                return false
            }
            if let cadence = step.cadence, cadence.lowerBound != cadence.upperBound { return false }
            switch step.power {
            case .steady, .ramp: return true
            default: return false
            }
        }
        func same(_ a: WorkoutStep, _ b: WorkoutStep) -> Bool {
            var a = a, b = b
            a.texts = []
            b.texts = []
            return a == b
        }
        guard index + 1 < steps.count, steps[index].intensity == .active, steps[index + 1].intensity == .rest,
            fits(steps[index]), fits(steps[index + 1])
        else { return 0 }
        var repeats = 1
        while index + 2 * repeats + 1 < steps.count, same(steps[index + 2 * repeats], steps[index]),
            same(steps[index + 2 * repeats + 1], steps[index + 1])
        {
            repeats += 1
        }
        return repeats
    }

    private static func intervalPower(_ power: PowerTarget, _ steady: String, _ low: String, _ high: String) -> [String]
    {
        switch power {
        case .steady(let level): ["\(steady)=\"\(share(level))\""]
        case .ramp(let from, let to): ["\(low)=\"\(share(from))\"", "\(high)=\"\(share(to))\""]
        default: []
        }
    }

    private static func element(_ name: String, _ attributes: [String], _ texts: [StepText]) -> [String] {
        let head = "    <\(name) " + attributes.joined(separator: " ")
        guard !texts.isEmpty else { return [head + "/>"] }
        return [head + ">"]
            + texts.map { "      <textevent timeoffset=\"\($0.offsetSeconds)\" message=\"\(escaped($0.text))\"/>" }
            + ["    </\(name)>"]
    }

    /// A share of FTP as Zwift writes it, exactly: 7545 hundredths of a percent is 0.7545.
    static func share(_ level: PowerLevel) -> String {
        let whole = level.hundredths / 10_000, fraction = level.hundredths % 10_000
        guard fraction != 0 else { return "\(whole)" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 4 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// Text as an attribute's or element's content. Only what XML 1.0 allows is written (§2.2, `Char`): another
    /// control character, U+FFFE or U+FFFF (a name from an .mrc or a coach's plan may hold one) is left out, as
    /// neither a character nor a reference to one may carry it (a replacement could make a text longer than its
    /// bound).
    static func escaped(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "\n": output += "&#10;"
            case "\r": output += "&#13;"
            case "\t": output += "&#9;"
            case _ where !allowed(scalar): continue
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}

extension PowerTarget {
    /// Whether it asks for a level (a steady power, a range, a ramp).
    var hasLevels: Bool {
        switch self {
        case .free, .maxEffort: false
        case .steady, .range, .ramp: true
        }
    }

    /// Whether every level is a share of FTP (nil for no levels at all).
    var hasFTPShareOnly: Bool? {
        switch self {
        case .free, .maxEffort: nil
        case .steady(let level): level.unit == .ftp
        case .range(let a, let b), .ramp(let a, let b): a.unit == .ftp && b.unit == .ftp
        }
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
