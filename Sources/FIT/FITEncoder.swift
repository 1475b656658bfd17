/// The FIT container (Garmin's Flexible and Interoperable Data Transfer protocol 1.0): a 14-byte header with its
/// CRC, definition and data messages in little-endian order, and the file CRC. It knows nothing of activities;
/// the caller decides which messages to write.
public struct FITEncoder {
    /// The unsigned base types this writer uses.
    public enum BaseType: UInt8 {
        case enumeration = 0x00
        case uint8 = 0x02
        case uint16 = 0x84
        case uint32 = 0x86
        case string = 0x07
        case uint32z = 0x8C

        var size: Int { FITBaseType(rawValue: rawValue)!.size }

        /// What a reader takes as "no value".
        var invalid: UInt64 { FITBaseType(rawValue: rawValue)!.invalidPattern }
    }

    public struct Field {
        public var number: UInt8
        public var type: BaseType
        /// Bytes; for strings the fixed length including the terminating NUL.
        public var size: Int

        /// The type's "no value", and the largest value the field can hold (a larger one is written as none).
        let invalid: UInt64
        let largest: UInt64

        public init(_ number: UInt8, _ type: BaseType, size: Int? = nil) {
            self.number = number
            self.type = type
            self.size = size ?? type.size
            // Worked out once here, not per value: a 4-hour file writes about 130 000 of them.
            invalid = type.invalid
            largest = type == .uint32z ? UInt64(UInt32.max) : type.invalid - 1
        }
    }

    /// A field's value: a number (nil = the type's invalid value) or a string.
    public enum Value {
        case number(UInt64?)
        case text(String)
    }

    /// The profile version this writer follows (21.32), as the header carries it.
    static let profileVersion: UInt16 = 2132

    private var records: [UInt8] = []
    /// Each local message type's fields, by local number (none until defined).
    private var definitions = [[Field]](repeating: [], count: 16)

    public init() {}

    /// Defines local message `local` (0…15) as global message `global` with these fields, in this order.
    public mutating func define(local: UInt8, global: UInt16, fields: [Field]) {
        precondition(local < 16, "FIT has 16 local message types")
        definitions[Int(local)] = fields
        records.append(0x40 | local)
        records.append(0)  // reserved
        records.append(0)  // little-endian
        records.append(UInt8(global & 0xFF))
        records.append(UInt8(global >> 8))
        records.append(UInt8(fields.count))
        for field in fields {
            records += [field.number, UInt8(field.size), field.type.rawValue]
        }
    }

    /// A data message of local type `local`, values in the order of its definition.
    public mutating func write(local: UInt8, _ values: [Value]) {
        guard local < 16, case let fields = definitions[Int(local)], !fields.isEmpty, fields.count == values.count
        else {
            preconditionFailure("FIT message \(local) written without a matching definition")
        }
        records.append(local)
        for (field, value) in zip(fields, values) {
            switch value {
            case .number(let number):
                // A value the field cannot hold is written as "no value" rather than as a wrong one.
                let raw = number.flatMap { $0 <= field.largest ? $0 : nil } ?? field.invalid
                for index in 0..<field.size { records.append(UInt8(truncatingIfNeeded: raw >> (8 * UInt64(index)))) }
            case .text(let text):
                // Whole characters only, so a UTF-8 sequence is never cut in two; NUL-padded.
                var bytes: [UInt8] = []
                for character in text {
                    let encoded = Array(String(character).utf8)
                    guard bytes.count + encoded.count < field.size else { break }
                    bytes += encoded
                }
                records += bytes + [UInt8](repeating: 0, count: field.size - bytes.count)
            }
        }
    }

    /// Header, messages and file CRC.
    public func file() -> [UInt8] {
        var header: [UInt8] = [14, 0x10, UInt8(Self.profileVersion & 0xFF), UInt8(Self.profileVersion >> 8)]
        let size = UInt32(records.count)
        header += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        header += Array(".FIT".utf8)
        let headerCRC = FITCRC.compute(header)
        header += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        var file = header + records
        let fileCRC = FITCRC.compute(file)
        file += [UInt8(fileCRC & 0xFF), UInt8(fileCRC >> 8)]
        return file
    }

    /// A Unix time in microseconds as a FIT date_time (seconds since the FIT epoch).
    public static func timestamp(microseconds: Int64) -> UInt64 {
        UInt64(max(0, microseconds / 1_000_000 - FITTime.epochOffsetSeconds))
    }
}
