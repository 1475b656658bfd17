import ArgumentParser
import CyclingSensors

#if canImport(Glibc)
    import Glibc
#endif

/// `cyclelog decode <characteristic> [HEX ...] [--json]` — the contract in DESIGN.md §3.
struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode characteristic values given as hex, one per argument or one per standard-input line.",
        discussion: """
            CHARACTERISTIC is a 16-bit UUID (2a63, 0x2A63), the 128-bit UUID, or a name \
            (\(Characteristic.allCases.map(\.name).joined(separator: ", "))).
            HEX is 2c008b00 or "2C 00 8B 00" (with separators, each group of one or two digits is a byte). \
            On standard input, blank lines and lines starting with # are skipped.
            A value that cannot be decoded prints an error naming the field and byte offset; the others \
            still decode and the exit status is 1.
            """
    )

    @Argument(help: "The characteristic: 2a63, 0x2A63, its 128-bit UUID, or a name such as cycling-power-measurement.")
    var characteristic: String

    @Argument(help: "Values in hex; read from standard input, one per line, when none are given.")
    var hex: [String] = []

    @Flag(help: "One JSON object per value with the raw wire integers.")
    var json = false

    func validate() throws {
        guard Characteristic(identifier: characteristic) != nil else {
            throw ValidationError(
                "unknown characteristic '\(characteristic)'; use a 16-bit UUID such as 2a63, a 128-bit UUID, or one of: "
                    + Characteristic.allCases.map(\.name).joined(separator: ", "))
        }
    }

    func run() throws {
        // validate() has checked the identifier.
        guard let characteristic = Characteristic(identifier: characteristic) else { throw ExitCode.validationFailure }
        let inputs = hex.isEmpty ? Self.standardInputLines() : hex
        var anyFailed = false
        for input in inputs {
            let outcome = Self.decode(input, as: characteristic)
            if case .failure = outcome { anyFailed = true }
            print(json ? JSONLine.render(outcome) : FieldTable.render(input: input, characteristic, outcome))
        }
        if anyFailed { throw ExitCode.failure }
    }

    static func decode(_ input: String, as characteristic: Characteristic) -> Result<[DecodedField], MalformedPayload> {
        switch HexInput.bytes(from: input) {
        case .failure(let error): return .failure(error)
        case .success(let bytes):
            do throws(MalformedPayload) {
                return .success(try characteristic.decodeFields(bytes))
            } catch {
                return .failure(error)
            }
        }
    }

    static func standardInputLines() -> [String] {
        var lines: [String] = []
        while let line = readLine() {
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            lines.append(trimmed)
        }
        return lines
    }
}

/// Turns the hex a user typed into bytes.
enum HexInput {
    /// `2c008b00` (digit pairs) or `2C 00 8B 00`, `2c-00-8b-00`, `2c:00:8b:00` (each group one byte,
    /// one or two digits, as logs that print bytes with `%x` do). An optional `0x` prefix is allowed.
    static func bytes(from input: String) -> Result<[UInt8], MalformedPayload> {
        let separators: Set<Character> = [" ", "\t", "-", ":", ","]
        var text = Substring(input.trimmingWhitespace())
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text = text.dropFirst(2) }
        let groups: [Substring]
        if text.contains(where: separators.contains) {
            groups = text.split(whereSeparator: separators.contains)
            if let bad = groups.firstIndex(where: { $0.count > 2 }) {
                return .failure(inputError(offset: bad, "byte group '\(groups[bad])' has more than two hex digits"))
            }
        } else {
            guard text.count % 2 == 0 else {
                return .failure(inputError(offset: text.count / 2, "odd number of hex digits"))
            }
            var pairs: [Substring] = []
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                pairs.append(text[index..<next])
                index = next
            }
            groups = pairs
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(groups.count)
        for (offset, group) in groups.enumerated() {
            guard let byte = UInt8(group, radix: 16) else {
                return .failure(inputError(offset: offset, "'\(group)' is not hexadecimal"))
            }
            bytes.append(byte)
        }
        return .success(bytes)
    }

    private static func inputError(offset: Int, _ why: String) -> MalformedPayload {
        MalformedPayload(field: "input", offset: offset, reason: .invalidValue(why))
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
