/// Facts of the FIT protocol shared by the writer and the reader.

/// Global message numbers of the FIT profile (21.x) that cyclelog writes or reads.
public enum FITMessageNumber {
    public static let fileID: UInt16 = 0
    public static let session: UInt16 = 18
    public static let lap: UInt16 = 19
    public static let record: UInt16 = 20
    public static let event: UInt16 = 21
    public static let deviceInfo: UInt16 = 23
    public static let activity: UInt16 = 34
}

/// The base types of FIT field definitions: the byte in a definition message, with the element size and the
/// bit pattern that means "no value".
public enum FITBaseType: UInt8, Sendable, CaseIterable {
    case enumeration = 0x00
    case sint8 = 0x01
    case uint8 = 0x02
    case sint16 = 0x83
    case uint16 = 0x84
    case sint32 = 0x85
    case uint32 = 0x86
    case string = 0x07
    case float32 = 0x88
    case float64 = 0x89
    case uint8z = 0x0A
    case uint16z = 0x8B
    case uint32z = 0x8C
    case byte = 0x0D
    case sint64 = 0x8E
    case uint64 = 0x8F
    case uint64z = 0x90

    /// Bytes per element.
    public var size: Int {
        switch self {
        case .enumeration, .sint8, .uint8, .string, .uint8z, .byte: 1
        case .sint16, .uint16, .uint16z: 2
        case .sint32, .uint32, .float32, .uint32z: 4
        case .float64, .sint64, .uint64, .uint64z: 8
        }
    }

    /// The raw element (zero-extended) that a reader takes as "no value".
    public var invalidPattern: UInt64 {
        switch self {
        case .enumeration, .uint8, .string, .byte: 0xFF
        case .sint8: 0x7F
        case .sint16: 0x7FFF
        case .uint16: 0xFFFF
        case .sint32: 0x7FFF_FFFF
        case .uint32, .float32: 0xFFFF_FFFF
        case .float64, .uint64: 0xFFFF_FFFF_FFFF_FFFF
        case .sint64: 0x7FFF_FFFF_FFFF_FFFF
        case .uint8z, .uint16z, .uint32z, .uint64z: 0
        }
    }

    public var isSigned: Bool { self == .sint8 || self == .sint16 || self == .sint32 || self == .sint64 }
    public var isFloat: Bool { self == .float32 || self == .float64 }
}

/// FIT's CRC-16: polynomial 0x8005 reflected (0xA001), initial value 0 (CRC-16/ARC), four bits at a time
/// with the protocol's nibble table.
public enum FITCRC {
    /// The FIT SDK's CRC (CRC-16/ARC: polynomial 0x8005, reflected as 0xA001, no final XOR), a byte per step from
    /// a table of 256 made from the polynomial, where the SDK's own form takes two steps of a nibble: a 4-hour file
    /// is 300 kB, checked once when it is read and once when it is written.
    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? crc >> 1 ^ 0xA001 : crc >> 1 }
        return crc
    }

    public static func compute(_ bytes: ArraySlice<UInt8>, start: UInt16 = 0) -> UInt16 {
        table.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { bytes in
                var crc = start
                for byte in bytes { crc = crc >> 8 ^ table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] }
                return crc
            }
        }
    }

    public static func compute(_ bytes: [UInt8], start: UInt16 = 0) -> UInt16 {
        compute(bytes[...], start: start)
    }
}

public enum FITTime {
    /// Seconds from the Unix epoch to the FIT epoch, 1989-12-31T00:00:00Z.
    public static let epochOffsetSeconds: Int64 = 631_065_600
    /// date_time values below this are seconds since the device powered on, not since the FIT epoch.
    public static let minimumAbsolute: Int64 = 0x1000_0000

    /// A FIT date_time as microseconds since the Unix epoch.
    public static func unixMicroseconds(_ fitSeconds: Int64) -> Int64 {
        (fitSeconds + epochOffsetSeconds) * 1_000_000
    }
}
