/// Reads the FIT container: headers, definition and data messages (either byte order, developer fields,
/// compressed timestamp headers), chained files, and both CRCs. It knows nothing of activities; it hands out
/// each data message's fields by number. Any fault stops the reading with the byte offset where it was found,
/// so a caller can refuse a damaged file as a whole.
public enum FITDecoder {
    public static func messages(_ bytes: [UInt8]) throws(FITError) -> [FITMessage] {
        var messages: [FITMessage] = []
        var offset = 0
        repeat {
            offset = try readFile(bytes, at: offset, into: &messages)
        } while offset < bytes.count
        return messages
    }

    /// Reads one FIT file starting at `start` (a header, its records and its CRC); returns where it ends.
    private static func readFile(
        _ bytes: [UInt8], at start: Int, into messages: inout [FITMessage]
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
        try reader.readAll(into: &messages)
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
            var type: FITBaseType?
        }
        var global: UInt16
        var bigEndian: Bool
        var fields: [Field]
        var developerBytes: Int
    }

    private struct RecordReader {
        let bytes: [UInt8]
        var offset: Int
        let end: Int
        var definitions: [Definition?] = Array(repeating: nil, count: 16)
        var lastTimestamp: Int64?

        init(bytes: [UInt8], offset: Int, end: Int) {
            self.bytes = bytes
            self.offset = offset
            self.end = end
        }

        mutating func readAll(into messages: inout [FITMessage]) throws(FITError) {
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
                    messages.append(message)
                } else if header & 0x40 != 0 {
                    try readDefinition(local: Int(header & 0x0F), developer: header & 0x20 != 0, at: recordStart)
                } else {
                    let message = try readData(local: Int(header & 0x0F), at: recordStart)
                    if let timestamp = message.integers[FITMessage.timestampField] { lastTimestamp = timestamp }
                    messages.append(message)
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
                fields.append(Definition.Field(number: bytes[base], size: size, type: type))
            }
            var developerBytes = 0
            if developer {
                let countAt = try take(1, for: "a definition message", at: recordStart)
                let developerCount = Int(bytes[countAt])
                let developerList = try take(3 * developerCount, for: "a definition message", at: recordStart)
                for index in 0..<developerCount { developerBytes += Int(bytes[developerList + 3 * index + 1]) }
            }
            definitions[local] = Definition(
                global: global, bigEndian: bigEndian, fields: fields, developerBytes: developerBytes)
        }

        private mutating func readData(local: Int, at recordStart: Int) throws(FITError) -> FITMessage {
            guard let definition = definitions[local] else {
                throw FITError(offset: recordStart, "has a data message of local type \(local) that was never defined")
            }
            var message = FITMessage(global: definition.global, offset: recordStart)
            message.integers.reserveCapacity(definition.fields.count)
            for field in definition.fields {
                let at = try take(field.size, for: "a data message", at: recordStart)
                guard let type = field.type, field.size >= type.size else { continue }
                switch type {
                case .string:
                    let text = bytes[at..<(at + field.size)].prefix { $0 != 0 }
                    if !text.isEmpty { message.texts[field.number] = String(decoding: text, as: UTF8.self) }
                case .byte:
                    continue
                default:
                    // Arrays keep their first element: the activity fields read here are all single values.
                    var raw: UInt64 = 0
                    for index in 0..<type.size {
                        let byte = UInt64(bytes[at + (definition.bigEndian ? index : type.size - 1 - index)])
                        raw = raw << 8 | byte
                    }
                    guard raw != type.invalidPattern else { continue }
                    if type.isFloat {
                        let value = type == .float32 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw)
                        if value.isFinite { message.floats[field.number] = value }
                    } else if type.isSigned {
                        let shift = UInt64(64 - 8 * type.size)
                        message.integers[field.number] = Int64(bitPattern: raw << shift) >> Int64(shift)
                    } else {
                        message.integers[field.number] = Int64(bitPattern: raw)
                    }
                }
            }
            _ = try take(definition.developerBytes, for: "a data message", at: recordStart)
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
