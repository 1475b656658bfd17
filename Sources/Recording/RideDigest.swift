import Workouts

/// A fingerprint of a ride's events (and the options that change the result): the same capture always gives the
/// same digest, so replaying it twice finds the workout already stored. Two 64-bit FNV-1a hashes with different
/// offsets make 128 bits; this is identity, not security.
public struct RideDigest: Sendable {
    private var first: UInt64 = 0xCBF2_9CE4_8422_2325
    private var second: UInt64 = 0x6C62_272E_07BB_0142

    public init(_ events: [RideEvent], wheelCircumferenceMillimetres: Int) {
        self.init(wheelCircumferenceMillimetres: wheelCircumferenceMillimetres)
        for event in events { add(event) }
    }

    /// An empty digest to feed event by event (a live ride keeps the digest, not its events).
    public init(wheelCircumferenceMillimetres: Int) {
        add(UInt64(wheelCircumferenceMillimetres))
    }

    /// The digest of a file's bytes, or of a text such as a FIT file's identity.
    public init(bytes: some Sequence<UInt8>) {
        add(UInt64(4))
        for byte in bytes { add(byte) }
    }

    public mutating func add(_ event: RideEvent) {
        add(UInt64(bitPattern: event.timeMicroseconds))
        switch event.kind {
        case .notification(let sensor, let characteristic, let value):
            add(1, sensor, UInt64(characteristic), value)
        case .read(let sensor, let characteristic, let value):
            add(2, sensor, UInt64(characteristic), value)
        default:
            // Rare events: their journal form is exact.
            add(3, "\(event.kind)", 0, [])
        }
    }

    private mutating func add(_ tag: UInt64, _ sensor: String, _ number: UInt64, _ bytes: [UInt8]) {
        add(tag)
        for byte in sensor.utf8 { add(byte) }
        add(number)
        add(UInt64(bytes.count))
        for byte in bytes { add(byte) }
    }

    private mutating func add(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { add(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    @inline(__always) private mutating func add(_ byte: UInt8) {
        first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        second = (second ^ UInt64(byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
    }

    public var hex: String { Self.hex(first) + Self.hex(second) }

    /// As a UUID (version 8, "custom"): the workout's sync identifier when the capture does not carry one.
    public var uuid: String {
        var digits = Array(hex)
        digits[12] = "8"
        digits[16] = ["8", "9", "a", "b"][Int(second >> 62)]
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }
        return parts.joined(separator: "-")
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
