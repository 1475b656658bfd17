/// The FIT container (Garmin's Flexible and Interoperable Data Transfer protocol 1.0): a 14-byte header with its
/// CRC, definition and data messages in little-endian order, and the file CRC. It knows nothing of activities;
/// `FITActivity` decides which messages to write.
struct FITEncoder {
    /// FIT base types (the base type byte of a field definition) with their sizes and invalid values.
    enum BaseType: UInt8 {
        case enumeration = 0x00
        case uint8 = 0x02
        case uint16 = 0x84
        case uint32 = 0x86
        case string = 0x07
        case uint32z = 0x8C

        var size: Int {
            switch self {
            case .enumeration, .uint8, .string: 1
            case .uint16: 2
            case .uint32, .uint32z: 4
            }
        }

        /// What a reader takes as "no value".
        var invalid: UInt64 {
            switch self {
            case .enumeration, .uint8, .string: 0xFF
            case .uint16: 0xFFFF
            case .uint32: 0xFFFF_FFFF
            case .uint32z: 0
            }
        }
    }

    struct Field {
        var number: UInt8
        var type: BaseType
        /// Bytes; for strings the fixed length including the terminating NUL.
        var size: Int

        init(_ number: UInt8, _ type: BaseType, size: Int? = nil) {
            self.number = number
            self.type = type
            self.size = size ?? type.size
        }
    }

    /// A field's value: a number (nil = the type's invalid value) or a string.
    enum Value {
        case number(UInt64?)
        case text(String)
    }

    /// The profile version this writer follows (21.32), as the header carries it.
    static let profileVersion: UInt16 = 2132
    /// Seconds from the Unix epoch to the FIT epoch, 1989-12-31T00:00:00Z.
    static let epochOffsetSeconds: Int64 = 631_065_600

    private var records: [UInt8] = []
    private var definitions: [UInt8: [Field]] = [:]

    /// Defines local message `local` (0…15) as global message `global` with these fields, in this order.
    mutating func define(local: UInt8, global: UInt16, fields: [Field]) {
        precondition(local < 16, "FIT has 16 local message types")
        definitions[local] = fields
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
    mutating func write(local: UInt8, _ values: [Value]) {
        guard let fields = definitions[local], fields.count == values.count else {
            preconditionFailure("FIT message \(local) written without a matching definition")
        }
        records.append(local)
        for (field, value) in zip(fields, values) {
            switch value {
            case .number(let number):
                // A value the field cannot hold is written as "no value" rather than as a wrong one.
                let limit = field.type == .uint32z ? UInt64(UInt32.max) : field.type.invalid - 1
                let raw = number.flatMap { $0 <= limit ? $0 : nil } ?? field.type.invalid
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
    func file() -> [UInt8] {
        var header: [UInt8] = [14, 0x10, UInt8(Self.profileVersion & 0xFF), UInt8(Self.profileVersion >> 8)]
        let size = UInt32(records.count)
        header += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        header += Array(".FIT".utf8)
        let headerCRC = Self.crc(header)
        header += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        var file = header + records
        let fileCRC = Self.crc(file)
        file += [UInt8(fileCRC & 0xFF), UInt8(fileCRC >> 8)]
        return file
    }

    /// FIT's CRC-16: polynomial 0x8005 reflected (0xA001), initial value 0 (CRC-16/ARC).
    static func crc(_ bytes: some Sequence<UInt8>, start: UInt16 = 0) -> UInt16 {
        var crc = start
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }

    /// A Unix time in microseconds as a FIT date_time (seconds since the FIT epoch).
    static func timestamp(microseconds: Int64) -> UInt64 {
        UInt64(max(0, microseconds / 1_000_000 - epochOffsetSeconds))
    }
}
