import CZlib

/// Why packed data read back from the database could not be unpacked.
public struct PackedDataError: Error, CustomStringConvertible {
    /// What kind of damage, for programs; `description` says where.
    public enum Code: String, Sendable {
        /// The data ends before what it announces.
        case cutShort
        /// A number, length, kind or reference that cannot be.
        case malformed
        /// zlib refused it.
        case corrupt
    }

    public var code: Code
    public var description: String

    public init(_ code: Code, description: String) {
        self.code = code
        self.description = description
    }
}

/// Varints (LEB128), zig-zag signed varints and length-prefixed text: the packing of stored journals and
/// sample chunks.
public struct PackedWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    public mutating func bytes(_ values: [UInt8]) { bytes += values }

    /// `values`, each octet minus (modulo 256) the one at the same place in `previous` where it has one: a counter
    /// that steps by the same amount, or a field that does not change, leaves the same octets every time.
    public mutating func differences(_ values: [UInt8], from previous: [UInt8]) {
        let common = min(values.count, previous.count)
        for index in 0..<common { bytes.append(values[index] &- previous[index]) }
        bytes += values[common...]
    }

    /// Another writer's bytes after their count, so that a reader can take them as a section or step over them.
    public mutating func section(_ other: PackedWriter) {
        unsigned(UInt64(other.bytes.count))
        bytes += other.bytes
    }

    public mutating func unsigned(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    public mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    public mutating func text(_ value: String) {
        unsigned(UInt64(value.utf8.count))
        bytes += value.utf8
    }
}

/// Reads what `PackedWriter` wrote; every read checks the bounds (the end of the bytes, or of a section).
public struct PackedReader: Sendable {
    private let bytes: [UInt8]
    private var offset = 0
    private let end: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.end = bytes.count
    }

    private init(_ bytes: [UInt8], from offset: Int, to end: Int) {
        self.bytes = bytes
        self.offset = offset
        self.end = end
    }

    public var atEnd: Bool { offset >= end }

    /// The next section (`PackedWriter.section`) as a reader of its own, this one moved past it; the bytes are
    /// shared, not copied.
    public mutating func section() throws(PackedDataError) -> PackedReader {
        let count = try count()
        defer { offset += count }
        return PackedReader(bytes, from: offset, to: offset + count)
    }

    public mutating func byte() throws(PackedDataError) -> UInt8 {
        guard offset < end else {
            throw PackedDataError(.cutShort, description: "the stored data is cut short")
        }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func unsigned() throws(PackedDataError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else {
                throw PackedDataError(.malformed, description: "an overlong number in the stored data")
            }
            value |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return value }
            shift += 7
        }
    }

    public mutating func signed() throws(PackedDataError) -> Int64 {
        let raw = try unsigned()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A length or a count: never more than the bytes left, so a damaged one cannot ask for a huge allocation.
    public mutating func count() throws(PackedDataError) -> Int {
        let value = try unsigned()
        guard value <= UInt64(end - offset) else {
            throw PackedDataError(.malformed, description: "a length of \(value) where \(end - offset) bytes are left")
        }
        return Int(value)
    }

    public mutating func skip(_ count: Int) throws(PackedDataError) {
        guard count <= end - offset else {
            throw PackedDataError(.cutShort, description: "the stored data is cut short")
        }
        offset += count
    }

    /// The next `count` bytes added (modulo 256) to those at the same place in `previous`, bytes past its end
    /// taken as they are: what `PackedWriter.differences` wrote, as a new value.
    public mutating func sums(_ count: Int, onto previous: [UInt8]) throws(PackedDataError) -> [UInt8] {
        guard count <= end - offset else {
            throw PackedDataError(.cutShort, description: "the stored data is cut short")
        }
        let common = min(count, previous.count)
        let start = offset
        offset += count
        return [UInt8](unsafeUninitializedCapacity: count) { value, initialized in
            for index in 0..<common { value[index] = bytes[start + index] &+ previous[index] }
            for index in common..<count { value[index] = bytes[start + index] }
            initialized = count
        }
    }

    /// The next `count` bytes XORed, in place, onto `value` (the previous value of the same field), which becomes
    /// `count` long; bytes past the previous value's end are taken as they are. No allocation while `value`'s
    /// buffer is not shared and large enough.
    public mutating func xored(_ count: Int, onto value: inout [UInt8]) throws(PackedDataError) {
        guard count <= end - offset else {
            throw PackedDataError(.cutShort, description: "the stored data is cut short")
        }
        let common = min(count, value.count)
        if value.count > count { value.removeLast(value.count - count) }
        for index in 0..<common { value[index] ^= bytes[offset + index] }
        value += bytes[(offset + common)..<(offset + count)]
        offset += count
    }

    public mutating func text() throws(PackedDataError) -> String {
        let count = try count()
        defer { offset += count }
        return String(decoding: bytes[offset..<(offset + count)], as: UTF8.self)
    }
}

/// zlib's one-shot `compress2` / `uncompress`, with the uncompressed size stored in front (uint32 LE) so that
/// inflating needs one allocation and a wrong size is caught.
public enum Zlib {
    /// The most deflate can expand: 1032 to 1 (zlib's technical details); a size header claiming more than this
    /// times the compressed bytes is damaged, and is refused before anything is allocated.
    static let largestRatio = 1032

    /// How hard deflate looks for repeats: `fast` (zlib's level 1) for data packed so that its repeats lie close
    /// together, `standard` (zlib's default, 6) otherwise.
    public enum Effort: Sendable {
        case fast, standard

        var level: Int32 { self == .fast ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION }
    }

    public static func deflate(_ input: [UInt8], effort: Effort = .standard) -> [UInt8] {
        let size = UInt32(truncatingIfNeeded: input.count)
        var output: [UInt8] = [
            UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24),
        ]
        guard !input.isEmpty else { return output }
        // The window and the hash table sized to the input (a minute of samples is about 1 kB, a journal piece
        // 40 kB), where zlib's defaults take 270 kB of state, set up for every call: most of the time of
        // deflating 240 small chunks. Any window size gives a stream `uncompress` reads.
        let windowBits = Int32(max(9, min(15, Int.bitWidth - (input.count - 1).leadingZeroBitCount)))
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, effort.level, Z_DEFLATED, windowBits, max(1, min(8, windowBits - 7)), Z_DEFAULT_STRATEGY,
                zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return stored(input, header: output) }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var compressed = [UInt8](repeating: 0, count: bound)
        let status = input.withUnsafeBufferPointer { source in
            compressed.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(bound)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        // With a deflateBound buffer the stream always ends; if it ever did not, the data is kept uncompressed.
        guard status == Z_STREAM_END else { return stored(input, header: output) }
        output += compressed[0..<Int(stream.total_out)]
        return output
    }

    /// `input` kept as it is, marked by the high bit of the size.
    private static func stored(_ input: [UInt8], header: [UInt8]) -> [UInt8] {
        var output = header
        output[3] |= 0x80
        return output + input
    }

    public static func inflate(_ input: [UInt8]) throws(PackedDataError) -> [UInt8] {
        guard input.count >= 4 else { throw PackedDataError(.cutShort, description: "the stored data is cut short") }
        let stored = input[3] & 0x80 != 0
        let size = Int(input[0]) | Int(input[1]) << 8 | Int(input[2]) << 16 | Int(input[3] & 0x7F) << 24
        guard stored || size <= (input.count - 4) * largestRatio + 64 else {
            throw PackedDataError(
                .corrupt,
                description: "the stored data is corrupt (it claims \(size) bytes from \(input.count - 4) compressed)")
        }
        if stored || size == 0 {
            guard input.count - 4 == size else {
                throw PackedDataError(.cutShort, description: "the stored data is cut short")
            }
            return Array(input[4...])
        }
        var output = [UInt8](repeating: 0, count: size)
        var length = uLong(size)
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { source in
                uncompress(out.baseAddress, &length, source.baseAddress.map { $0 + 4 }, uLong(input.count - 4))
            }
        }
        guard status == Z_OK, Int(length) == size else {
            throw PackedDataError(.corrupt, description: "the stored data is corrupt (zlib status \(status))")
        }
        return output
    }
}
