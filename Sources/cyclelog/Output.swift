import CyclingSensors
import Workouts

/// `--json`: one object per value, raw wire integers, keys as in DESIGN.md §3; or an error object.
enum JSONLine {
    static func render(_ outcome: Result<[DecodedField], MalformedPayload>) -> String {
        var line = ""
        write(outcome, into: &line)
        return line
    }

    /// Appends the line (without its newline) to `output`: `decode` writes a million of them, so nothing is
    /// built and joined on the way.
    static func write(_ outcome: Result<[DecodedField], MalformedPayload>, into output: inout String) {
        switch outcome {
        case .success(let fields):
            output += "{"
            for (index, field) in fields.enumerated() {
                if index > 0 { output += ", " }
                JSONValue.quote(field.key, into: &output)
                output += ": "
                write(field.value, into: &output)
            }
            output += "}"
        case .failure(let error):
            output += "{\"error\": {\"field\": "
            JSONValue.quote(error.field, into: &output)
            output += ", \"offset\": \(error.offset), \"reason\": "
            JSONValue.quote(error.reason.description, into: &output)
            output += "}}"
        }
    }

    private static func write(_ value: DecodedField.Value, into output: inout String) {
        switch value {
        case .unsigned(let raw): output += String(raw)
        case .signed(let raw): output += String(raw)
        case .list(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += ", " }
                output += String(item)
            }
            output += "]"
        case .text(let text): JSONValue.quote(text, into: &output)
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
        var table = ""
        write(input: input, characteristic, outcome, into: &table)
        return table
    }

    /// Appends the table (without a final newline) to `output`.
    static func write(
        input: String, _ characteristic: Characteristic, _ outcome: Result<[DecodedField], MalformedPayload>,
        into output: inout String
    ) {
        output += input
        output += "  "
        output += characteristic.name
        output += " (0x"
        output += String(characteristic.rawValue, radix: 16, uppercase: true)
        output += ")"
        switch outcome {
        case .failure(let error):
            output += "\n  error: \(error)"
        case .success(let fields):
            // Keys are ASCII: their UTF-8 length is their width.
            let width = fields.map(\.key.utf8.count).max() ?? 0
            for field in fields {
                output += "\n  "
                output += field.key
                for _ in field.key.utf8.count..<width { output += " " }
                output += "  "
                output += shown(field)
                if let meaning = field.meaning {
                    output += "  ("
                    output += meaning
                    output += ")"
                }
            }
        }
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
