/// Text that came from outside — a sensor's advertised name (over the air), a ride's name, a marker, a file — shown
/// so that it cannot act on a terminal: every control character (C0, DEL, C1) becomes a visible escape, `\x1B` or
/// `\u009B`, and nothing is lost.
public enum ShownText {
    /// The escape for a control character, nil for any other.
    public static func escape(_ scalar: Unicode.Scalar) -> String? {
        let value = scalar.value
        if value < 0x20 || value == 0x7F { return "\\x" + hex(value, 2) }
        if (0x80...0x9F).contains(value) { return "\\u" + hex(value, 4) }
        return nil
    }

    /// `text` with its control characters escaped. With `keepingLayout`, newlines and tabs stay: for whole messages
    /// and outputs of our own that quote outside text. DEL is always escaped (Docs/guide/replay.md, "Text from outside"): a terminal
    /// may ignore it, but a pager or a log viewer shows it as a blot, and a name must read the same everywhere.
    public static func visible(_ text: String, keepingLayout: Bool = false) -> String {
        func kept(_ scalar: Unicode.Scalar) -> Bool {
            keepingLayout && (scalar == "\n" || scalar == "\t")
        }
        guard needsEscapes(text.utf8, keepingLayout: keepingLayout) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            if kept(scalar) {
                output.unicodeScalars.append(scalar)
            } else if let escaped = escape(scalar) {
                output += escaped
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// Whether `visible` would change the UTF-8 text `utf8`: whether it holds a control character (C0, DEL, or
    /// C1, which UTF-8 writes as 0xC2 then 0x80 to 0x9F), newlines, tabs and DEL aside with `keepingLayout`. Read
    /// as bytes, so that a caller holding UTF-8 (`decode`'s output, a million lines) need not make strings first.
    @inlinable
    public static func needsEscapes(_ utf8: some Sequence<UInt8>, keepingLayout: Bool = false) -> Bool {
        // Without a branch per byte (a flag or-ed over all of them), so that the compiler vectorises it: `decode`
        // checks hundreds of megabytes.
        let keeps: UInt8 = keepingLayout ? 1 : 0
        var found: UInt8 = 0
        var previous: UInt8 = 0
        for byte in utf8 {
            let c0: UInt8 = byte < 0x20 ? 1 : 0
            let layout: UInt8 = ((byte == UInt8(ascii: "\n") ? 1 : 0) | (byte == UInt8(ascii: "\t") ? 1 : 0)) & keeps
            let delete: UInt8 = byte == 0x7F ? 1 : 0
            let c1: UInt8 = (previous == 0xC2 ? 1 : 0) & (byte &- 0x80 < 0x20 ? 1 : 0)
            found |= (c0 & ~layout) | delete | c1
            previous = byte
        }
        return found != 0
    }

    /// At most `limit` characters of a line, with how much was cut: a 10 MB bad line is not echoed whole.
    public static func cut(_ text: some StringProtocol, to limit: Int = 200) -> String {
        guard text.count > limit else { return String(text) }
        return String(text.prefix(limit)) + "… (\(text.count - limit) more characters)"
    }

    private static func hex(_ value: UInt32, _ width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension ShownText {
    /// Free text kept on one line of a text format (a journal's names and markers, a workout's canonical text):
    /// `\\`, `\n` and `\r` escaped, and every other control character (a NUL, an escape sequence from a sensor's
    /// name) as `\xHH` or `\uHHHH`, so that the line stays one line, readable and safe to print, and reads back
    /// exactly (`lineUnescaped`). By scalar: a line feed followed by a combining mark is escaped too.
    public static func lineEscaped(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            default:
                if let escape = escape(scalar) {
                    output += escape
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }

    /// What `lineEscaped` wrote, read back.
    public static func lineUnescaped(_ text: some StringProtocol) -> String {
        var output = ""
        var scalars = Substring(text).unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            guard scalar == "\\", let next = scalars.popFirst() else {
                output.unicodeScalars.append(scalar)
                continue
            }
            switch next {
            case "n": output += "\n"
            case "r": output += "\r"
            case "x", "u":
                let width = next == "x" ? 2 : 4
                let digits = String(String.UnicodeScalarView(scalars.prefix(width)))
                if digits.count == width, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16),
                    let decoded = Unicode.Scalar(value)
                {
                    output.unicodeScalars.append(decoded)
                    scalars = scalars.dropFirst(width)
                } else {
                    output.unicodeScalars.append(next)
                }
            default: output.unicodeScalars.append(next)
            }
        }
        return output
    }
}

extension StringProtocol {
    /// The text without the white space (and line ends) around it.
    public var withoutSurroundingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
