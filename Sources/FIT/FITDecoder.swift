/// Reads the FIT container: headers, definition and data messages (either byte order, developer fields,
/// compressed timestamp headers), chained files, and both CRCs. It knows nothing of activities; it hands out
/// each data message's fields by number. Any fault stops the reading with the byte offset where it was found,
/// so a caller can refuse a damaged file as a whole.
public enum FITDecoder {
    public static func messages(_ bytes: [UInt8]) throws(FITError) -> [FITMessage] {
        var messages: [FITMessage] = []
        try forEachMessage(bytes) { messages.append($0) }
        return messages
    }

    /// Each data message in the file's order, handed over as it is read: a caller that keeps a few values of each
    /// (a 4-hour activity has 14 400 records) holds no list of every message. The file is not checked whole
    /// until this returns: an error thrown after some messages means none of them may be used.
    public static func forEachMessage(
        _ bytes: [UInt8], _ body: (FITMessage) throws(FITError) -> Void
    ) throws(FITError) {
        var offset = 0
        repeat {
            offset = try readFile(bytes, at: offset, body)
        } while offset < bytes.count
    }

    /// Reads one FIT file starting at `start` (a header, its records and its CRC); returns where it ends.
    private static func readFile(
        _ bytes: [UInt8], at start: Int, _ body: (FITMessage) throws(FITError) -> Void
    ) throws(FITError) -> Int {
        guard bytes.count - start >= 12 else {
            throw FITError(
                offset: start, "is too short to be a FIT file (\(bytes.count - start) bytes where a header needs 12)")
        }
        let headerSize = Int(bytes[start])
        guard headerSize == 12 || headerSize == 14 else {
            throw FITError(offset: start, "has a header size of \(headerSize) bytes; FIT headers have 12 or 14")
        }
        guard Array(bytes[(start + 8)..<(start + 12)]) == Array(".FIT".utf8) else {
            throw FITError(offset: start + 8, "lacks the \".FIT\" signature: it is not a FIT file")
        }
        guard bytes.count - start >= headerSize else {
            throw FITError(offset: bytes.count, "ends inside its \(headerSize)-byte header")
        }
        if headerSize == 14 {
            let stored = UInt16(bytes[start + 12]) | UInt16(bytes[start + 13]) << 8
            // 0 means the writer did not compute the header CRC, which the protocol allows.
            if stored != 0 && stored != FITCRC.compute(bytes[start..<(start + 12)]) {
                throw FITError(offset: start + 12, "has a header whose CRC does not match: the file is damaged")
            }
        }
        let dataSize =
            Int(UInt32(bytes[start + 4]) | UInt32(bytes[start + 5]) << 8)
            | Int(UInt32(bytes[start + 6]) << 16 | UInt32(bytes[start + 7]) << 24)
        let dataStart = start + headerSize
        let dataEnd = dataStart + dataSize
        guard dataEnd + 2 <= bytes.count else {
            throw FITError(
                offset: bytes.count,
                "ends at byte \(bytes.count) but its header says its messages run to byte \(dataEnd) and a CRC "
                    + "follows: the file is cut short")
        }
        let storedCRC = UInt16(bytes[dataEnd]) | UInt16(bytes[dataEnd + 1]) << 8
        let computedCRC = FITCRC.compute(bytes[start..<dataEnd])
        var reader = RecordReader(bytes: bytes, offset: dataStart, end: dataEnd)
        // Read the records before judging the CRC: a broken record names a more useful place than the CRC does.
        try reader.readAll(body)
        guard storedCRC == computedCRC else {
            throw FITError(
                offset: dataEnd,
                "has a CRC that does not match its contents (stored 0x\(hex(storedCRC)), computed "
                    + "0x\(hex(computedCRC))): the file is damaged")
        }
        return dataEnd + 2
    }

    private static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    private struct Definition {
        struct Field {
            var number: UInt8
            var size: Int
            /// How the field's value is read, worked out once for the definition rather than for every message.
            var reading: Reading
        }
        enum Reading {
            /// A type this reader does not know, bytes, or a field shorter than its type: left out.
            case skipped
            case text
            case float32, float64
            case signed(size: Int, invalid: UInt64)
            case unsigned(size: Int, invalid: UInt64)
        }
        var global: UInt16
        var bigEndian: Bool
        var fields: [Field]
        var developerBytes: Int
        /// The bytes of a data message after its header.
        var size: Int
        /// Every field number once: a message's values are then appended without looking for an earlier one.
        var numbersAreDistinct: Bool
    }

    private struct RecordReader {
        let bytes: [UInt8]
        var offset: Int
        let end: Int
        var definitions: [Definition?] = Array(repeating: nil, count: 16)
        var lastTimestamp: Int64?
        /// The last message handed over, its lists kept for the next one: a message whose lists the caller did not
        /// keep is read without allocating.
        var spare = FITMessage(global: 0, offset: 0)

        init(bytes: [UInt8], offset: Int, end: Int) {
            self.bytes = bytes
            self.offset = offset
            self.end = end
        }

        mutating func readAll(_ body: (FITMessage) throws(FITError) -> Void) throws(FITError) {
            while offset < end {
                let recordStart = offset
                let header = bytes[offset]
                offset += 1
                if header & 0x80 != 0 {
                    // Compressed timestamp header: local types 0–3 and 5 bits of time since the last timestamp.
                    let local = Int((header >> 5) & 0x03)
                    guard let last = lastTimestamp else {
                        throw FITError(
                            offset: recordStart, "has a compressed timestamp before any full timestamp")
                    }
                    let low = Int64(header & 0x1F)
                    var timestamp = (last & ~0x1F) | low
                    if low < last & 0x1F { timestamp += 0x20 }
                    var message = try readData(local: local, at: recordStart)
                    message.integers[FITMessage.timestampField] = timestamp
                    lastTimestamp = timestamp
                    try body(message)
                    spare = message
                } else if header & 0x40 != 0 {
                    try readDefinition(local: Int(header & 0x0F), developer: header & 0x20 != 0, at: recordStart)
                } else {
                    let message = try readData(local: Int(header & 0x0F), at: recordStart)
                    if let timestamp = message.integers[FITMessage.timestampField] { lastTimestamp = timestamp }
                    try body(message)
                    spare = message
                }
            }
        }

        private mutating func take(_ count: Int, for what: String, at recordStart: Int) throws(FITError) -> Int {
            guard offset + count <= end else {
                throw FITError(
                    offset: recordStart, "has \(what) that runs past the end of the messages (byte \(end))")
            }
            defer { offset += count }
            return offset
        }

        private mutating func readDefinition(local: Int, developer: Bool, at recordStart: Int) throws(FITError) {
            let fixed = try take(5, for: "a definition message", at: recordStart)
            let bigEndian = bytes[fixed + 1] == 1
            guard bytes[fixed + 1] <= 1 else {
                throw FITError(offset: fixed + 1, "has a definition with an unknown byte order \(bytes[fixed + 1])")
            }
            let global =
                bigEndian
                ? UInt16(bytes[fixed + 2]) << 8 | UInt16(bytes[fixed + 3])
                : UInt16(bytes[fixed + 2]) | UInt16(bytes[fixed + 3]) << 8
            let count = Int(bytes[fixed + 4])
            let list = try take(3 * count, for: "a definition message", at: recordStart)
            var fields: [Definition.Field] = []
            for index in 0..<count {
                let base = list + 3 * index
                let size = Int(bytes[base + 1])
                guard size > 0 else {
                    throw FITError(offset: base, "defines field \(bytes[base]) with a size of 0 bytes")
                }
                // The low 5 bits number the type; bit 7 only says "multi-byte". An unknown type stays raw bytes.
                let type = FITBaseType.allCases.first { $0.rawValue & 0x1F == bytes[base + 2] & 0x1F }
                fields.append(Definition.Field(number: bytes[base], size: size, reading: reading(type, size)))
            }
            var developerBytes = 0
            if developer {
                let countAt = try take(1, for: "a definition message", at: recordStart)
                let developerCount = Int(bytes[countAt])
                let developerList = try take(3 * developerCount, for: "a definition message", at: recordStart)
                for index in 0..<developerCount { developerBytes += Int(bytes[developerList + 3 * index + 1]) }
            }
            definitions[local] = Definition(
                global: global, bigEndian: bigEndian, fields: fields, developerBytes: developerBytes,
                size: fields.reduce(0) { $0 + $1.size }, numbersAreDistinct: Set(fields.map(\.number)).count == count)
        }

        private func reading(_ type: FITBaseType?, _ size: Int) -> Definition.Reading {
            guard let type, size >= type.size else { return .skipped }
            switch type {
            case .string: return .text
            case .byte: return .skipped
            case .float32: return .float32
            case .float64: return .float64
            default:
                return type.isSigned
                    ? .signed(size: type.size, invalid: type.invalidPattern)
                    : .unsigned(size: type.size, invalid: type.invalidPattern)
            }
        }

        private mutating func readData(local: Int, at recordStart: Int) throws(FITError) -> FITMessage {
            guard let definition = definitions[local] else {
                throw FITError(offset: recordStart, "has a data message of local type \(local) that was never defined")
            }
            var at = try take(definition.size + definition.developerBytes, for: "a data message", at: recordStart)
            var message = FITMessage(global: definition.global, offset: recordStart)
            swap(&message, &spare)
            (message.global, message.offset) = (definition.global, recordStart)
            message.integers.removeAll(keepingCapacity: true)
            message.floats.removeAll(keepingCapacity: true)
            message.texts.removeAll(keepingCapacity: true)
            message.integers.reserveCapacity(definition.fields.count)
            let (distinct, bigEndian) = (definition.numbersAreDistinct, definition.bigEndian)
            // The message's bytes were taken whole above: the fields are read without a check per byte.
            bytes.withUnsafeBytes { buffer in
                for field in definition.fields {
                    defer { at += field.size }
                    /// An integer of 1, 2, 4 or 8 bytes in the definition's byte order; an array keeps its first
                    /// element (the activity fields read here are all single values).
                    func integer(_ size: Int) -> UInt64 {
                        switch size {
                        case 1: return UInt64(buffer[at])
                        case 2:
                            let value = buffer.loadUnaligned(fromByteOffset: at, as: UInt16.self)
                            return UInt64(bigEndian ? UInt16(bigEndian: value) : UInt16(littleEndian: value))
                        case 4:
                            let value = buffer.loadUnaligned(fromByteOffset: at, as: UInt32.self)
                            return UInt64(bigEndian ? UInt32(bigEndian: value) : UInt32(littleEndian: value))
                        default:
                            let value = buffer.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                            return bigEndian ? UInt64(bigEndian: value) : UInt64(littleEndian: value)
                        }
                    }
                    switch field.reading {
                    case .skipped:
                        continue
                    case .text:
                        let text = buffer[at..<(at + field.size)].prefix { $0 != 0 }
                        if !text.isEmpty { message.texts[field.number] = String(decoding: text, as: UTF8.self) }
                    case .float32:
                        let raw = integer(4)
                        let value = Double(Float(bitPattern: UInt32(raw)))
                        if raw != 0xFFFF_FFFF && value.isFinite {
                            message.floats.set(field.number, value, distinct: distinct)
                        }
                    case .float64:
                        let raw = integer(8)
                        let value = Double(bitPattern: raw)
                        if raw != UInt64.max && value.isFinite {
                            message.floats.set(field.number, value, distinct: distinct)
                        }
                    case .signed(let size, let invalid):
                        let raw = integer(size)
                        guard raw != invalid else { continue }
                        let shift = UInt64(64 - 8 * size)
                        message.integers.set(
                            field.number, Int64(bitPattern: raw << shift) >> Int64(shift), distinct: distinct)
                    case .unsigned(let size, let invalid):
                        let raw = integer(size)
                        guard raw != invalid else { continue }
                        message.integers.set(field.number, Int64(bitPattern: raw), distinct: distinct)
                    }
                }
            }
            return message
        }
    }
}

/// One data message: its global number, where its record starts in the file, and its valid fields by number
/// (fields holding the "no value" pattern are absent).
public struct FITMessage: Sendable {
    public static let timestampField: UInt8 = 253

    public var global: UInt16
    public var offset: Int
    public var integers: FITFields<Int64> = [:]
    public var floats: FITFields<Double> = [:]
    public var texts: FITFields<String> = [:]

    public init(global: UInt16, offset: Int) {
        self.global = global
        self.offset = offset
    }

    public var timestamp: Int64? { integers[Self.timestampField] }

    /// A field divided by its profile scale (e.g. 1000 for seconds in milliseconds).
    public func scaled(_ field: UInt8, _ scale: Double) -> Double? {
        integers[field].map { Double($0) / scale } ?? floats[field].map { $0 / scale }
    }
}

/// A message's values by field number: a few to a dozen, in the order the message's definition gives them. Kept as
/// one small list and searched: a 4-hour file has 14 400 records, and a hash table each cost more to build than to
/// read.
public struct FITFields<Value: Equatable & Sendable>: Equatable, Sendable, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    private var entries: [(number: UInt8, value: Value)] = []

    public init(dictionaryLiteral elements: (UInt8, Value)...) {
        for (number, value) in elements { self[number] = value }
    }

    public subscript(number: UInt8) -> Value? {
        get { entries.first { $0.number == number }?.value }
        set {
            let index = entries.firstIndex { $0.number == number }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((number, value))
            case (nil, nil): break
            }
        }
    }

    public var isEmpty: Bool { entries.isEmpty }

    mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    mutating func removeAll(keepingCapacity: Bool) { entries.removeAll(keepingCapacity: keepingCapacity) }

    /// `self[number] = value`, appended without a search when the caller knows `number` is not there yet.
    mutating func set(_ number: UInt8, _ value: Value, distinct: Bool) {
        if distinct { entries.append((number, value)) } else { self[number] = value }
    }

    /// The same numbers with the same values, in any order.
    public static func == (lhs: FITFields, rhs: FITFields) -> Bool {
        lhs.entries.count == rhs.entries.count && lhs.entries.allSatisfy { rhs[$0.number] == $0.value }
    }

    public var description: String {
        "[" + entries.map { "\($0.number): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

/// Why a file could not be read, with the byte offset where the fault is.
public struct FITError: Error, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String

    public init(offset: Int, _ reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// Reads after the file's name: "ride.fit" + " is too short … (at byte 0)".
    public var description: String { "\(reason) (at byte \(offset))" }
}
