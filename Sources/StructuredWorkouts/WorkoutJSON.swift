import Formats

/// A structured workout as JSON (`cyclelog workouts show --json`, Docs/reference/workout-text.md): every fact of
/// the canonical text, typed, so that another program reads a workout without parsing the text.
extension StructuredWorkout {
    public var json: JSONValue {
        .object([
            ("name", .string(name)), ("author", .optionalString(author)), ("description", .optionalString(description)),
            ("durationSeconds", totalSeconds.map { .integer(Int64($0)) } ?? .null), ("needsFTP", .bool(needsFTP)),
            ("steps", .array(steps.map(\.json))),
        ])
    }
}

extension WorkoutStep {
    /// `{"intensity", "seconds", "meters", "power", "cadenceRPM", "heartRateBPM", "gradePercent", "scored",
    /// "name", "texts"}`: `seconds` or `meters` for a timed or distance step (null otherwise: an open one), a range
    /// as `[low, high]`.
    public var json: JSONValue {
        func range(_ value: ClosedRange<Int>?) -> JSONValue {
            value.map { .array([.integer(Int64($0.lowerBound)), .integer(Int64($0.upperBound))]) } ?? .null
        }
        var seconds: JSONValue = .null, meters: JSONValue = .null
        switch length {
        case .seconds(let value): seconds = .integer(Int64(value))
        case .meters(let value): meters = .integer(Int64(value))
        case .open: break
        }
        return .object([
            ("intensity", .string(intensity.rawValue)), ("seconds", seconds), ("meters", meters),
            ("power", power.json), ("cadenceRPM", range(cadence)), ("heartRateBPM", range(heartRate)),
            ("gradePercent", gradeHundredths.map { .number(Double($0) / 100) } ?? .null), ("scored", .bool(scored)),
            ("name", .optionalString(name)),
            (
                "texts",
                .array(
                    texts.map {
                        .object([("offsetSeconds", .integer(Int64($0.offsetSeconds))), ("text", .string($0.text))])
                    })
            ),
        ])
    }
}

extension PowerTarget {
    /// `{"kind": "free" | "max" | "steady" | "range" | "ramp"}` and its levels: `level` (steady), `low` and `high`
    /// (range), `from` and `to` (ramp), each `{"percentOfFTP": 88.5}` or `{"watts": 250}`.
    public var json: JSONValue {
        switch self {
        case .free: .object([("kind", .string("free"))])
        case .maxEffort: .object([("kind", .string("max"))])
        case .steady(let level): .object([("kind", .string("steady")), ("level", level.json)])
        case .range(let low, let high):
            .object([("kind", .string("range")), ("low", low.json), ("high", high.json)])
        case .ramp(let from, let to): .object([("kind", .string("ramp")), ("from", from.json), ("to", to.json)])
        }
    }
}

extension PowerLevel {
    /// `{"percentOfFTP": 88.5}` or `{"watts": 250}`, exact to the hundredth.
    public var json: JSONValue {
        .object([(unit == .ftp ? "percentOfFTP" : "watts", .number(Double(hundredths) / 100))])
    }
}
