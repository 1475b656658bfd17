import CyclingSensors
import Workouts

/// `--json`: one object per value, raw wire integers, keys as in DESIGN.md §3; or an error object.
enum JSONLine {
    static func render(_ outcome: Result<[DecodedField], MalformedPayload>) -> String {
        switch outcome {
        case .success(let fields):
            let members = fields.map { "\(quoted($0.key)): \(value($0.value))" }
            return "{" + members.joined(separator: ", ") + "}"
        case .failure(let error):
            return "{\"error\": {\"field\": \(quoted(error.field)), \"offset\": \(error.offset), "
                + "\"reason\": \(quoted(error.reason.description))}}"
        }
    }

    static func value(_ value: DecodedField.Value) -> String {
        switch value {
        case .unsigned(let raw): String(raw)
        case .signed(let raw): String(raw)
        case .list(let items): "[" + items.map(String.init).joined(separator: ", ") + "]"
        case .text(let text): quoted(text)
        }
    }

    static func quoted(_ text: String) -> String {
        JSONValue.string(text).rendered()
    }
}

/// The readable table: units applied (W, rpm, s, %, N·m, degrees), raw value beside scaled ones.
enum FieldTable {
    static func render(
        input: String, _ characteristic: Characteristic, _ outcome: Result<[DecodedField], MalformedPayload>
    ) -> String {
        let uuid = "0x" + String(characteristic.rawValue, radix: 16, uppercase: true)
        var lines = ["\(input)  \(characteristic.name) (\(uuid))"]
        switch outcome {
        case .failure(let error):
            lines.append("  error: \(error)")
        case .success(let fields):
            let width = fields.map(\.key.count).max() ?? 0
            for field in fields {
                let padding = String(repeating: " ", count: width - field.key.count)
                var line = "  \(field.key)\(padding)  \(shown(field))"
                if let meaning = field.meaning { line += "  (\(meaning))" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    static func shown(_ field: DecodedField) -> String {
        let unit = field.unit.isEmpty ? "" : (field.unit == "°" || field.unit == "%" ? field.unit : " " + field.unit)
        switch field.value {
        case .text(let text):
            return JSONLine.quoted(text)
        case .list(let items):
            let scaled = items.map { scale(Double($0), field.resolution) }
            return "[" + scaled.joined(separator: ", ") + "]" + unit
        case .unsigned(let raw):
            if field.key == "flags" || field.key.hasSuffix("Features") || field.key == "features" {
                return "0x" + String(raw, radix: 16, uppercase: true)
            }
            return scaledWithRaw(Double(raw), String(raw), field.resolution, unit)
        case .signed(let raw):
            return scaledWithRaw(Double(raw), String(raw), field.resolution, unit)
        }
    }

    static func scaledWithRaw(_ raw: Double, _ rawText: String, _ resolution: Double, _ unit: String) -> String {
        resolution == 1 ? rawText + unit : scale(raw, resolution) + unit + " [raw \(rawText)]"
    }

    /// Up to six decimals, trailing zeros dropped (1/1024 s steps need that many).
    static func scale(_ raw: Double, _ resolution: Double) -> String {
        let value = raw * resolution
        let micro = (value * 1_000_000).rounded()
        let negative = micro < 0
        let magnitude = Int64(abs(micro))
        let whole = magnitude / 1_000_000
        var fraction = String(magnitude % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (negative ? "-" : "") + String(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }
}
