import Formats
import StructuredWorkouts

/// The `.erg` (watts) and `.mrc` (% of FTP) course files of TrainerRoad, GoldenCheetah and many trainers'
/// programs: a header, then points of (minutes, power). Between two points the power goes from the first value to
/// the second, so equal values are a steady step and different ones a ramp; two points at the same minute are a
/// step change. `[COURSE TEXT]` holds messages by seconds from the start. LAP lines and the other sections
/// (`[INTERVAL DATA]`, `[MODE DATA]`) are not needed to ride it.
public enum ERGFile {
    public static func read(_ bytes: [UInt8], fileName: String) throws(WorkoutReadError) -> StructuredWorkout {
        try WorkoutFormat.checkSize(bytes.count)
        // Old tools wrote Latin-1: a file that is not UTF-8 is read as that.
        let text = String(validating: bytes, as: UTF8.self) ?? latin1(bytes)
        var section = ""
        var header: [String: String] = [:]
        var unit: PowerLevel.Unit?
        var points: [(seconds: Int, hundredths: Int, line: Int)] = []
        var texts: [StepText] = []
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let place = "line \(index + 1)"
            let line = String(raw).withoutSurroundingWhitespace
            if line.isEmpty || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                let name = line.uppercased()
                section = name.hasPrefix("[END ") ? "" : name
                continue
            }
            switch section {
            case "[COURSE HEADER]":
                if let equals = line.firstIndex(of: "=") {
                    header[line[..<equals].withoutSurroundingWhitespace.uppercased()] =
                        line[line.index(after: equals)...].withoutSurroundingWhitespace
                } else {
                    let words = line.uppercased().split(whereSeparator: \.isWhitespace)
                    if words.count == 2, words[0] == "MINUTES" {
                        switch words[1] {
                        case "WATTS": unit = .watts
                        case "PERCENT", "FTP": unit = .ftp
                        default:
                            throw WorkoutReadError(place, "the column '\(words[1].prefix(20))' is not WATTS or PERCENT")
                        }
                    }
                }
            case "[COURSE DATA]":
                guard let unit else {
                    throw WorkoutReadError(
                        "the header", "has no 'MINUTES WATTS' or 'MINUTES PERCENT' line: the power's unit is unknown")
                }
                let words = line.split(whereSeparator: \.isWhitespace)
                guard words.count >= 2 else {
                    throw WorkoutReadError(place, "a course point needs minutes and a power")
                }
                if words[1].uppercased() == "LAP" { continue }
                guard let minutes = Double(words[0]), minutes.isFinite, minutes >= 0, let power = Double(words[1]),
                    power.isFinite, power >= 0
                else {
                    throw WorkoutReadError(place, "'\(line.prefix(40))' is not minutes and a power")
                }
                // Held to what a workout can be before anything is rounded: a day, 3000 W or 1000 % of FTP.
                guard minutes <= Double(StructuredWorkout.maximumStepSeconds) / 60,
                    power <= (unit == .ftp ? 1000 : 3000)
                else {
                    throw WorkoutReadError(
                        place,
                        "is beyond a day, or beyond \(unit == .ftp ? "1000 % of FTP" : "3000 W") (or the unit is missing)"
                    )
                }
                let seconds = Int((minutes * 60).rounded())
                if let last = points.last, seconds < last.seconds {
                    throw WorkoutReadError(place, "goes back in time (\(words[0]) minutes after \(last.seconds) s)")
                }
                points.append((seconds, Int((power * 100).rounded()), index + 1))
            case "[COURSE TEXT]":
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                let words = fields.count >= 2 ? fields.map { Substring($0) } : line.split(separator: " ", maxSplits: 1)
                guard words.count >= 2, let seconds = Double(words[0].withoutSurroundingWhitespace), seconds >= 0,
                    seconds <= Double(StructuredWorkout.maximumStepSeconds)
                else { throw WorkoutReadError(place, "a course text needs its time in seconds, then the message") }
                texts.append(StepText(offsetSeconds: Int(seconds.rounded()), words[1].withoutSurroundingWhitespace))
            default:
                continue
            }
        }
        guard let unit else {
            throw WorkoutReadError(
                "the header", "has no 'MINUTES WATTS' or 'MINUTES PERCENT' line: the power's unit is unknown")
        }
        guard points.count >= 2 else { throw WorkoutReadError("[COURSE DATA]", "has fewer than two points: no step") }
        var steps: [WorkoutStep] = []
        var starts: [Int] = []
        for (a, b) in zip(points, points.dropFirst()) where b.seconds > a.seconds {
            let from = PowerLevel(hundredths: a.hundredths, unit), to = PowerLevel(hundredths: b.hundredths, unit)
            steps.append(
                WorkoutStep(
                    .active, .seconds(b.seconds - a.seconds), from == to ? .steady(from) : .ramp(from: from, to: to)))
            starts.append(a.seconds)
            guard steps.count <= StructuredWorkout.maximumSteps else {
                throw WorkoutReadError("line \(b.line)", "more than \(StructuredWorkout.maximumSteps) steps")
            }
        }
        guard !steps.isEmpty else {
            throw WorkoutReadError("[COURSE DATA]", "every point is at the same time: no step")
        }
        for text in texts {
            // A text before the first point is said at its start.
            let index = starts.lastIndex { $0 <= text.offsetSeconds } ?? 0
            steps[index].texts.append(StepText(offsetSeconds: max(0, text.offsetSeconds - starts[index]), text.text))
        }
        let name = header["DESCRIPTION"]?.nonEmpty ?? header["FILE NAME"]?.nonEmpty ?? fileName
        let workout = StructuredWorkout(name: name, description: nil, steps: steps)
        try workout.checkLimits()
        return workout
    }

    private static func latin1(_ bytes: [UInt8]) -> String {
        String(bytes.map { Character(Unicode.Scalar($0)) })
    }
}
