import ArgumentParser
import CyclingSensors
import Dispatch
import Formats
import ProgramMain
import Workouts

#if canImport(Glibc)
    import Glibc
#endif

/// `cyclelog decode <characteristic> [HEX ...] [--json]` — the contract in Docs/guide/decode.md.
struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode characteristic values given as hex, one per argument or one per standard-input line.",
        discussion: """
            CHARACTERISTIC is a 16-bit UUID (2a63, 0x2A63), the 128-bit UUID, or a name \
            (\(characteristicNames)).
            HEX is 2c008b00 or "2C 00 8B 00" (with separators, each group of one or two digits is a byte). \
            On standard input, blank lines and lines starting with # are skipped.
            A value that cannot be decoded prints an error naming the field and byte offset; the others \
            still decode and the exit status is 1.
            """
    )

    /// Every characteristic's name, ", " between them. Written by a loop: `map(\.name).joined(separator:)` ran in
    /// the standard library's unspecialized generic code, whose first use looks up conformances at run time, and
    /// this text is made at every start of every command (ArgumentParser reads each command's configuration to
    /// build its tree).
    static let characteristicNames: String = {
        var names = ""
        for characteristic in Characteristic.allCases {
            if !names.isEmpty { names += ", " }
            names += characteristic.name
        }
        return names
    }()

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
                    + Self.characteristicNames)
        }
    }

    func run() throws {
        // validate() has checked the identifier.
        guard let characteristic = Characteristic(identifier: characteristic) else { throw ExitCode.validationFailure }
        var anyFailed = false
        if hex.isEmpty {
            anyFailed = Self.decodeStandardInput(as: characteristic, json: json)
        } else {
            for input in hex {
                let outcome = Self.decode(input, as: characteristic)
                if case .failure = outcome { anyFailed = true }
                sayOnStandardOutput(
                    json ? JSONLine.render(outcome) : FieldTable.render(input: input, characteristic, outcome))
            }
        }
        if anyFailed { throw ExitCode.failure }
    }

    /// Standard input, decoded as it arrives: each read takes what is there, and the answers to the lines it
    /// completed are written before the next read. A pipe that pauses (`btmon | … | cyclelog decode`) gets each
    /// answer at once, a file is answered in bulk, and memory holds one read's worth whatever the input's length.
    /// A read of many lines is decoded in two halves at once, one on each of two cores, and written in order.
    /// Returns whether any value failed to decode.
    static func decodeStandardInput(as characteristic: Characteristic, json: Bool) -> Bool {
        var anyFailed = false
        let outputs = [OutputBuffer(), OutputBuffer()]
        var input = LineReader(descriptor: STDIN_FILENO)
        while let lines = input.read() {
            let answers: [Answers]
            if lines.count < bytesWorthTwoCores {
                answers = [answer(lines, as: characteristic, json: json, into: outputs[0])]
            } else {
                // Each half in an array of its own: the two cores then never count references to the same one.
                let middle = (lines[(lines.count / 2)...].firstIndex(of: UInt8(ascii: "\n")) ?? lines.count - 1) + 1
                let halves = Halves([Array(lines[..<middle]), Array(lines[middle...])], outputs)
                DispatchQueue.concurrentPerform(iterations: 2) { part in
                    halves.answers[part] = answer(
                        halves.lines[part], as: characteristic, json: json, into: halves.outputs[part])
                }
                answers = [halves.answers[0], halves.answers[1]]
            }
            for (output, answered) in zip(outputs, answers) {
                anyFailed = answered.anyFailed || anyFailed
                if answered.needsEscapes {
                    StandardStream.output.write(ShownText.visible(output.text, keepingLayout: true))
                } else {
                    StandardStream.output.write(output.bytes)
                }
                output.removeAll()
            }
        }
        return anyFailed
    }

    /// What decoding part of a read left in its output.
    private struct Answers {
        var anyFailed = false
        /// Control characters an input line brought in (in an error's reason, in the table's echo, in a decoded
        /// string) are shown escaped, as `print` shows them. Escaping keeps newlines, so a part's answers are
        /// checked, and escaped, at once, each by the core that wrote them (the table checked 340 MB for 1 M lines).
        var needsEscapes = false
    }

    /// The answers to `lines` in `output`, and what is to know of them.
    private static func answer(
        _ lines: [UInt8], as characteristic: Characteristic, json: Bool, into output: OutputBuffer
    ) -> Answers {
        let anyFailed = decode(lines, as: characteristic, json: json, into: output)
        return Answers(
            anyFailed: anyFailed, needsEscapes: ShownText.needsEscapes(output.bytes, keepingLayout: true))
    }

    /// A read's lines in two halves, for two cores: part N reads `lines[N]`, and writes only `outputs[N]` and
    /// `answers[N]`, so the parts never touch the same memory (hence unchecked), and the read waits for both.
    private final class Halves: @unchecked Sendable {
        let lines: [[UInt8]]
        let outputs: [OutputBuffer]
        let answers = UnsafeMutablePointer<Answers>.allocate(capacity: 2)

        init(_ lines: [[UInt8]], _ outputs: [OutputBuffer]) {
            self.lines = lines
            self.outputs = outputs
            answers.initialize(repeating: Answers(), count: 2)
        }

        deinit { answers.deallocate() }
    }

    /// Fewer bytes than this in a read (about a thousand lines) are decoded on one core: the second one's start
    /// would cost more than it saves (a pipe that pauses brings a few lines at a time).
    static let bytesWorthTwoCores = 16_384

    /// The answers to the lines of `lines` (each ended by a newline, the last perhaps not), each on a line of its
    /// own, appended to `output`; whether any value failed.
    private static func decode(
        _ lines: [UInt8], as characteristic: Characteristic, json: Bool, into output: OutputBuffer
    ) -> Bool {
        var anyFailed = false
        var value = ValueDecoder()
        var start = lines.startIndex
        while start < lines.endIndex {
            let end = lines[start...].firstIndex(of: UInt8(ascii: "\n")) ?? lines.endIndex
            defer { start = end + 1 }
            guard let text = inputLine(lines[start..<end]) else { continue }
            let outcome = value.decode(text, as: characteristic)
            if case .failure = outcome { anyFailed = true }
            if json {
                JSONLine.write(outcome, into: output)
            } else {
                FieldTable.write(input: text, characteristic, outcome, into: output)
            }
            output.append(UInt8(ascii: "\n"))
        }
        return anyFailed
    }

    /// A line of standard input as valid UTF-8 without the whitespace around it; nil for a blank line or a
    /// comment.
    static func inputLine(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return nil }
        let trimmed = bytes[first...last]
        guard trimmed.first != UInt8(ascii: "#") else { return nil }
        guard trimmed.contains(where: { $0 >= 0x80 }) else { return trimmed }
        // Beyond ASCII: bytes that are not UTF-8 are replaced (as any text is shown), and whitespace beyond
        // ASCII (a no-break space from a web page) is trimmed too.
        let unicodeTrimmed = String(decoding: trimmed, as: UTF8.self).trimmingWhitespace()
        return unicodeTrimmed.isEmpty || unicodeTrimmed.hasPrefix("#") ? nil : Array(unicodeTrimmed.utf8)[...]
    }

    static func decode(_ input: String, as characteristic: Characteristic) -> Result<[DecodedField], MalformedPayload> {
        var value = ValueDecoder()
        return value.decode(Array(input.utf8)[...], as: characteristic)
    }
}

/// Decodes values one after the other into a list of bytes and a list of fields it keeps: a log of a million values
/// then makes no list per value (each line's answer is written before the next is decoded, and the lists are
/// emptied, not freed).
struct ValueDecoder {
    private var bytes: [UInt8] = []
    private var fields: [DecodedField] = []

    init() {
        bytes.reserveCapacity(64)
        fields.reserveCapacity(16)
    }

    /// The fields of the value whose hex is `text`, or why there are none.
    mutating func decode(
        _ text: ArraySlice<UInt8>, as characteristic: Characteristic
    ) -> Result<[DecodedField], MalformedPayload> {
        bytes.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        if let failure = HexInput.read(text, into: &bytes) { return .failure(failure) }
        do throws(MalformedPayload) {
            try characteristic.decodeFields(bytes, into: &fields)
        } catch {
            return .failure(error)
        }
        return .success(fields)
    }
}

/// The lines of a file descriptor as they arrive, holding one read and one unfinished line at most.
struct LineReader {
    let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    private var unfinished: [UInt8] = []

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// Reads what is there (waiting only while nothing is) and returns the lines it completed, each with its
    /// newline (none when the read ended no line); at the end of the input, the last line even without one. Nil
    /// once the input ended (or cannot be read).
    mutating func read() -> [UInt8]? {
        var count: Int
        repeat {
            count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        } while count < 0 && errno == EINTR
        guard count > 0 else {
            defer { unfinished = [] }
            return unfinished.isEmpty ? nil : unfinished
        }
        let chunk = buffer[0..<count]
        guard let newline = chunk.lastIndex(of: UInt8(ascii: "\n")) else {
            unfinished += chunk
            return []
        }
        var lines = unfinished
        lines += chunk[...newline]
        unfinished = Array(chunk[(newline + 1)...])
        return lines
    }
}

/// Turns the hex a user typed into bytes.
enum HexInput {
    /// `2c008b00` (digit pairs) or `2C 00 8B 00`, `2c-00-8b-00`, `2c:00:8b:00` (each group one byte,
    /// one or two digits, as logs that print bytes with `%x` do). An optional `0x` prefix is allowed.
    static func bytes(from input: ArraySlice<UInt8>) -> Result<[UInt8], MalformedPayload> {
        var bytes: [UInt8] = []
        if let failure = read(input, into: &bytes) { return .failure(failure) }
        return .success(bytes)
    }

    /// Appends the bytes `input` writes to `bytes` (empty when it is called); nil when the input is hex, else why
    /// it is not.
    static func read(_ input: ArraySlice<UInt8>, into bytes: inout [UInt8]) -> MalformedPayload? {
        if appendPlainDigits(input, to: &bytes) { return nil }
        bytes.removeAll(keepingCapacity: true)
        let separators: Set<Character> = [" ", "\t", "-", ":", ","]
        var text = Substring(String(decoding: input, as: UTF8.self).trimmingWhitespace())
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text = text.dropFirst(2) }
        let groups: [Substring]
        if text.contains(where: separators.contains) {
            groups = text.split(whereSeparator: separators.contains)
            if let bad = groups.firstIndex(where: { $0.count > 2 }) {
                return inputError(offset: bad, "byte group '\(groups[bad])' has more than two hex digits")
            }
        } else {
            guard text.count % 2 == 0 else {
                return inputError(offset: text.count / 2, "odd number of hex digits")
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
        bytes.reserveCapacity(groups.count)
        for (offset, group) in groups.enumerated() {
            guard let byte = UInt8(group, radix: 16) else {
                bytes.removeAll(keepingCapacity: true)
                return inputError(offset: offset, "'\(group)' is not hexadecimal")
            }
            bytes.append(byte)
        }
        return nil
    }

    /// The common case read straight from the UTF-8: an even number of hex digits and nothing else (not even
    /// `0x`), appended to `bytes`; false for anything else (perhaps with some bytes appended), which the general
    /// reading above handles and explains.
    private static func appendPlainDigits(_ utf8: ArraySlice<UInt8>, to bytes: inout [UInt8]) -> Bool {
        /// A digit's value, or 0xFF for any other byte.
        @inline(__always) func value(_ digit: UInt8) -> UInt8 {
            let decimal = digit &- UInt8(ascii: "0")
            if decimal < 10 { return decimal }
            let letter = (digit | 0x20) &- UInt8(ascii: "a")
            return letter < 6 ? letter + 10 : 0xFF
        }
        guard !utf8.isEmpty, utf8.count % 2 == 0 else { return false }
        // Read into memory of the stack, then appended at once: one check of the list's room, not one per byte.
        return utf8.withUnsafeBufferPointer { digits in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digits.count / 2) { read in
                for index in read.indices {
                    let high = value(digits[2 * index]), low = value(digits[2 * index + 1])
                    guard high < 16, low < 16 else { return false }
                    read[index] = high << 4 | low
                }
                bytes.append(contentsOf: read)
                return true
            }
        }
    }

    private static func inputError(offset: Int, _ why: String) -> MalformedPayload? {
        MalformedPayload(field: "input", offset: offset, reason: .invalidValue(why))
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
