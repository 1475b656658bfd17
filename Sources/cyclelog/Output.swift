import CyclingSensors
import Formats
import Workouts

/// `--json`: one object per value, raw wire integers, keys as in Docs/guide/decode.md; or an error object.
enum JSONLine {
    static func render(_ outcome: Result<[DecodedField], MalformedPayload>) -> String {
        let line = OutputBuffer(capacity: 256)
        write(outcome, into: line)
        return line.text
    }

    /// Appends the line (without its newline) to `output` as UTF-8: `decode` writes a million of them, so no
    /// String is built on the way.
    static func write(_ outcome: Result<[DecodedField], MalformedPayload>, into output: OutputBuffer) {
        switch outcome {
        case .success(let fields):
            output.append(UInt8(ascii: "{"))
            // Each field read in place: copying one out would count references to its texts.
            fields.withUnsafeBufferPointer { fields in
                for index in fields.indices {
                    if index > 0 { output.append(static: ", ") }
                    output.append(key: fields[index].key)
                    write(fields[index].value, into: output)
                }
            }
            output.append(UInt8(ascii: "}"))
        case .failure(let error):
            output.append(static: "{\"error\": {\"field\": ")
            output.append(quoted: error.field)
            output.append(static: ", \"offset\": ")
            output.append(decimal: Int64(error.offset))
            output.append(static: ", \"reason\": ")
            output.append(quoted: error.reason.description)
            output.append(static: "}}")
        }
    }

    private static func write(_ value: DecodedField.Value, into output: OutputBuffer) {
        switch value {
        case .unsigned(let raw): output.append(decimal: raw)
        case .signed(let raw): output.append(decimal: raw)
        case .list(let items):
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(static: ", ") }
                output.append(decimal: item)
            }
            output.append(UInt8(ascii: "]"))
        case .text(let text): output.append(quoted: text)
        }
    }
}

/// The readable table: units applied (W, rpm, s, %, N·m, degrees), raw value beside scaled ones.
enum FieldTable {
    static func render(
        input: String, _ characteristic: Characteristic, _ outcome: Result<[DecodedField], MalformedPayload>
    ) -> String {
        let table = OutputBuffer(capacity: 1024)
        write(input: Array(input.utf8)[...], characteristic, outcome, into: table)
        return table.text
    }

    /// Appends the table (without a final newline) to `output`; `input` is the value as the user wrote it.
    static func write(
        input: ArraySlice<UInt8>, _ characteristic: Characteristic,
        _ outcome: Result<[DecodedField], MalformedPayload>, into output: OutputBuffer
    ) {
        output.append(input)
        output.append(static: "  ")
        output.append(text: characteristic.name)
        output.append(static: " (0x")
        output.append(hexadecimal: UInt64(characteristic.rawValue))
        output.append(UInt8(ascii: ")"))
        switch outcome {
        case .failure(let error):
            output.append(text: "\n  error: \(error)")
        case .success(let fields):
            // Keys are ASCII: their UTF-8 length is their width.
            var width = 0
            for field in fields { width = max(width, field.key.utf8.count) }
            for field in fields {
                output.append(static: "\n  ")
                output.append(text: field.key)
                for _ in 0..<(width - field.key.utf8.count + 2) { output.append(UInt8(ascii: " ")) }
                writeShown(field, into: output)
                var parts = 0
                field.forEachMeaningPart { part in
                    output.append(static: parts == 0 ? "  (" : ", ")
                    output.append(text: part)
                    parts += 1
                }
                if parts > 0 { output.append(UInt8(ascii: ")")) }
            }
        }
    }

    /// The value in its unit, with the raw integer beside a scaled one.
    private static func writeShown(_ field: DecodedField, into output: OutputBuffer) {
        func writeUnit() {
            guard !field.unit.isEmpty else { return }
            // Degrees and percent follow the number; every other unit is spaced. (Compared by length and bytes: a
            // String comparison with "°" takes Unicode's slow path, and a generic comparison of the two views
            // took 7 % of the table's time.)
            let unit = field.unit.utf8
            let degrees = unit.count == 2 && unit.first == 0xC2 && unit.last == 0xB0
            let percent = unit.count == 1 && unit.first == UInt8(ascii: "%")
            if !degrees && !percent { output.append(UInt8(ascii: " ")) }
            output.append(text: field.unit)
        }
        func writeScaled(_ raw: Double, appendRaw: () -> Void) {
            if field.resolution == 1 {
                appendRaw()
                writeUnit()
            } else {
                writeScale(raw, field.resolution, into: output)
                writeUnit()
                output.append(static: " [raw ")
                appendRaw()
                output.append(UInt8(ascii: "]"))
            }
        }
        switch field.value {
        case .text(let text):
            output.append(quoted: text)
        case .list(let items):
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(static: ", ") }
                writeScale(Double(item), field.resolution, into: output)
            }
            output.append(UInt8(ascii: "]"))
            writeUnit()
        case .unsigned(let raw):
            if field.isBitField {
                output.append(static: "0x")
                output.append(hexadecimal: raw)
            } else {
                writeScaled(Double(raw)) { output.append(decimal: raw) }
            }
        case .signed(let raw):
            writeScaled(Double(raw)) { output.append(decimal: raw) }
        }
    }

    /// Up to six decimals, trailing zeros dropped (1/1024 s steps need that many).
    private static func writeScale(_ raw: Double, _ resolution: Double, into output: OutputBuffer) {
        let micro = (raw * resolution * 1_000_000).rounded()
        if micro < 0 { output.append(UInt8(ascii: "-")) }
        let magnitude = UInt64(abs(micro))
        output.append(decimal: magnitude / 1_000_000)
        var fraction = magnitude % 1_000_000
        guard fraction != 0 else { return }
        var places = 6
        while fraction % 10 == 0 {
            fraction /= 10
            places -= 1
        }
        output.append(UInt8(ascii: "."))
        // With its leading zeros: 0.000977.
        output.append(decimal: fraction, width: places)
    }
}

/// UTF-8 on its way to standard output. `decode` appends some 25 pieces to it per line, a million lines, so an
/// append is a capacity check and a copy, without the checks and generic paths of an array's.
final class OutputBuffer {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 1 << 17) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// What was appended since the last `removeAll`.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    func removeAll() { count = 0 }

    /// Room for `more` bytes after the last.
    @inline(__always)
    private func reserve(_ more: Int) {
        if count + more > capacity { grow(toHold: more) }
    }

    @inline(never)
    private func grow(toHold more: Int) {
        capacity = max(capacity * 2, count + more)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        grown.update(from: storage, count: count)
        storage.deallocate()
        storage = grown
    }

    func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        (storage + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    func append(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// A constant's UTF-8.
    func append(static text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `text`'s UTF-8.
    func append(text: String) {
        guard text.utf8.withContiguousStorageIfAvailable({ append($0) }) == nil else { return }
        var copy = text
        copy.withUTF8 { append($0) }
    }

    /// `text` as a JSON string. Most text has nothing to escape and goes in whole.
    func append(quoted text: String) {
        let plain = text.utf8.withContiguousStorageIfAvailable { utf8 in
            guard JSONValue.isPlain(utf8) else { return false }
            reserve(utf8.count + 2)
            append(UInt8(ascii: "\""))
            append(utf8)
            append(UInt8(ascii: "\""))
            return true
        }
        guard plain != true else { return }
        var quoted = ""
        JSONValue.quote(text, into: &quoted)
        append(text: quoted)
    }

    /// `key` as an object's key with its colon and space (`"key": `), in one copy. A decoded field's key is a
    /// lowerCamelCase identifier (`DecodedField.key`; DecodedFieldTests checks every one), so nothing in it needs
    /// an escape and it is not scanned for one, a million lines times each field.
    func append(key: String) {
        let copied = key.utf8.withContiguousStorageIfAvailable { utf8 in
            reserve(utf8.count + 4)
            storage[count] = UInt8(ascii: "\"")
            if let source = utf8.baseAddress { (storage + count + 1).update(from: source, count: utf8.count) }
            count += utf8.count + 1
            storage[count] = UInt8(ascii: "\"")
            storage[count + 1] = UInt8(ascii: ":")
            storage[count + 2] = UInt8(ascii: " ")
            count += 3
        }
        guard copied == nil else { return }
        append(quoted: key)
        append(static: ": ")
    }

    /// The two decimal digits of each number below 100, in order: numbers are written two digits at a time.
    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// `value` in decimal digits, at least `width` of them (leading zeros).
    func append(decimal value: UInt64, width: Int = 1) {
        // Counted by multiplying, not dividing: a division costs some twenty multiplications.
        var digitCount = 1
        var power: UInt64 = 10
        while digitCount < 20, value >= power {
            digitCount += 1
            power &*= 10
        }
        let written = max(digitCount, width)
        reserve(written)
        let pairs = Self.digitPairs.utf8Start
        var remaining = value
        var index = count + written
        while remaining >= 100 {
            let pair = Int(remaining % 100) * 2
            remaining /= 100
            index -= 2
            storage[index] = pairs[pair]
            storage[index + 1] = pairs[pair + 1]
        }
        if remaining >= 10 {
            index -= 2
            storage[index] = pairs[Int(remaining) * 2]
            storage[index + 1] = pairs[Int(remaining) * 2 + 1]
        } else {
            index -= 1
            storage[index] = UInt8(ascii: "0") + UInt8(remaining)
        }
        // The leading zeros `width` asks for.
        while index > count {
            index -= 1
            storage[index] = UInt8(ascii: "0")
        }
        count += written
    }

    /// `value` in upper-case hexadecimal digits, without leading zeros.
    func append(hexadecimal value: UInt64) {
        let digitCount = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
        reserve(digitCount)
        for index in 0..<digitCount {
            let nibble = UInt8(value >> (4 * UInt64(digitCount - 1 - index)) & 0xF)
            storage[count + index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
        }
        count += digitCount
    }

    /// `value` in decimal digits, with a minus sign when negative.
    func append(decimal value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        append(decimal: value.magnitude)
    }
}
