/// A JSON value with ordered keys, so that the same workout always prints the same bytes (the keys in
/// the order Docs/reference/json.md lists them), without Foundation.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        lhs.rendered() == rhs.rendered()
    }

    /// A number rounded to `decimals` places, or null.
    public static func rounded(_ value: Double?, _ decimals: Int = 2) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return .integer(Int64(rounded)) }
        return .number(rounded)
    }

    public static func optionalString(_ value: String?) -> JSONValue {
        value.map { .string($0) } ?? .null
    }

    /// Compact on one line, or indented by two spaces per level.
    public func rendered(pretty: Bool = false) -> String {
        var output = ""
        write(into: &output, pretty: pretty, indent: 0)
        return output
    }

    private func write(into output: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .integer(let value): output += String(value)
        case .number(let value): output += value.isFinite ? String(value) : "null"
        case .string(let value): Self.quote(value, into: &output)
        case .array(let items):
            guard !items.isEmpty else {
                output += "[]"
                return
            }
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                if pretty { output += "\n" + String(repeating: " ", count: indent + 2) }
                item.write(into: &output, pretty: pretty, indent: indent + 2)
            }
            if pretty { output += "\n" + String(repeating: " ", count: indent) }
            output += "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output += pretty ? "," : ", " }
                if pretty { output += "\n" + String(repeating: " ", count: indent + 2) }
                Self.quote(key, into: &output)
                output += ": "
                value.write(into: &output, pretty: pretty, indent: indent + 2)
            }
            if pretty { output += "\n" + String(repeating: " ", count: indent) }
            output += "}"
        }
    }

    /// Whether UTF-8 text goes into a JSON string as it is: no control character, quotation mark or backslash.
    @inlinable
    public static func isPlain(_ utf8: some Sequence<UInt8>) -> Bool {
        !utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    /// `text` as a JSON string, appended to `output`.
    public static func quote(_ text: String, into output: inout String) {
        output += "\""
        // Most text (every key) has nothing to escape and goes in whole.
        let plain = text.utf8.withContiguousStorageIfAvailable { isPlain($0) }
        if plain == true {
            output += text
            output += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let digits = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
