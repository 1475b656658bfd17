/// A little-endian cursor over a characteristic value (GATT fields are little-endian: Core Specification, ATT).
///
/// Each read checks the length first and advances only on success, so a failed read leaves the cursor
/// on the field that did not fit and the error names that field and its offset.
@usableFromInline
struct ByteReader {
    @usableFromInline let bytes: [UInt8]
    @usableFromInline private(set) var offset: Int

    @inlinable init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    @inlinable var remainingCount: Int { bytes.count - offset }
    @inlinable var isAtEnd: Bool { offset >= bytes.count }

    @inlinable func require(_ count: Int, _ field: StaticString) throws(MalformedPayload) {
        guard remainingCount >= count else {
            throw MalformedPayload(
                field: "\(field)", offset: offset,
                reason: .truncated(needed: count, available: remainingCount))
        }
    }

    @inlinable mutating func readUInt8(_ field: StaticString) throws(MalformedPayload) -> UInt8 {
        try require(1, field)
        defer { offset += 1 }
        return bytes[offset]
    }

    @inlinable mutating func readUInt16(_ field: StaticString) throws(MalformedPayload) -> UInt16 {
        try require(2, field)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    @inlinable mutating func readInt16(_ field: StaticString) throws(MalformedPayload) -> Int16 {
        Int16(bitPattern: try readUInt16(field))
    }

    /// Reads a uint24 (FTMS Total Distance, Targeted Distance) into the low 24 bits of a UInt32.
    @inlinable mutating func readUInt24(_ field: StaticString) throws(MalformedPayload) -> UInt32 {
        try require(3, field)
        defer { offset += 3 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
    }

    @inlinable mutating func readUInt32(_ field: StaticString) throws(MalformedPayload) -> UInt32 {
        try require(4, field)
        defer { offset += 4 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }

    /// Reads every remaining byte (an array or string that fills the rest of the value).
    @inlinable mutating func readRest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    /// Reads the rest of the value as uint16 items (RR intervals, force/torque arrays); an odd byte
    /// left over is a truncated item.
    @inlinable mutating func readUInt16Array(_ field: StaticString) throws(MalformedPayload) -> [UInt16] {
        guard remainingCount % 2 == 0 else {
            throw MalformedPayload(
                field: "\(field)", offset: bytes.count - 1, reason: .truncated(needed: 2, available: 1))
        }
        var items: [UInt16] = []
        items.reserveCapacity(remainingCount / 2)
        while !isAtEnd { items.append(try readUInt16(field)) }
        return items
    }

    /// Rejects bytes after the last field, for characteristics whose layout has no room for them.
    @inlinable func expectEnd() throws(MalformedPayload) {
        guard isAtEnd else {
            throw MalformedPayload(
                field: "trailingBytes", offset: offset, reason: .unexpectedTrailingBytes(count: remainingCount))
        }
    }
}

/// The encoding counterpart of `ByteReader`: appends little-endian fields.
@usableFromInline
struct ByteWriter {
    @usableFromInline var bytes: [UInt8] = []

    @inlinable init(capacity: Int = 20) { bytes.reserveCapacity(capacity) }

    @inlinable mutating func write(_ value: UInt8) { bytes.append(value) }
    @inlinable mutating func write(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }
    @inlinable mutating func write(_ value: Int16) { write(UInt16(bitPattern: value)) }
    @inlinable mutating func writeUInt24(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
    }
    @inlinable mutating func write(_ value: UInt32) {
        write(UInt16(truncatingIfNeeded: value))
        write(UInt16(truncatingIfNeeded: value >> 16))
    }
    @inlinable mutating func write(_ values: [UInt8]) { bytes.append(contentsOf: values) }
}
