/// Heart Rate Measurement, 0x2A37 (notify), as the GATT Specification Supplement lays it out.
///
/// The heart rate is uint8 or uint16 by flag bit 0; energy expended is in kJ; RR intervals (1/1024 s,
/// oldest first) fill the rest of the value, so an odd byte at the end is a truncated interval. Without
/// RR intervals, trailing bytes are tolerated and counted.
public struct HeartRateMeasurement: EncodableCharacteristicValue, FieldAppending {
    public static let characteristic = Characteristic.heartRateMeasurement
    /// RR intervals count 1/1024 s.
    public static let rrTicksPerSecond = 1024.0

    public struct Flags: OptionSet, Equatable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let heartRateIsUInt16 = Flags(rawValue: 1 << 0)
        /// Sensor contact detected; meaningful only with `sensorContactSupported`.
        public static let sensorContactDetected = Flags(rawValue: 1 << 1)
        public static let sensorContactSupported = Flags(rawValue: 1 << 2)
        public static let energyExpendedPresent = Flags(rawValue: 1 << 3)
        public static let rrIntervalsPresent = Flags(rawValue: 1 << 4)
        public static let reserved = Flags(rawValue: 0xE0)
        static let names: [(bit: Int, name: String)] =
            [
                (0, "uint16 heart rate"), (1, "contact detected"), (2, "contact supported"), (3, "energy expended"),
                (4, "RR intervals"),
            ] + (5...7).map { ($0, "reserved bit \($0)") }
    }

    /// The sensor-contact state carried by flag bits 1–2.
    public enum SensorContact: Equatable, Sendable {
        /// Bits 1–2 = 0b00 or 0b01: the sensor cannot tell (bit 1 alone means nothing).
        case notSupported
        /// 0b10: supported, skin contact not detected (pycycling reports this as contact — a bug).
        case notDetected
        /// 0b11.
        case detected
    }

    public var flags: Flags
    /// Beats per minute.
    public var heartRate: UInt16
    /// Kilojoules since the last reset.
    public var energyExpended: UInt16?
    /// 1/1024 s each, oldest first.
    public var rrIntervals: [UInt16]?
    public var trailingByteCount: Int = 0

    public var sensorContact: SensorContact {
        guard flags.contains(.sensorContactSupported) else { return .notSupported }
        return flags.contains(.sensorContactDetected) ? .detected : .notDetected
    }

    /// Builds a measurement; `flags` supplies the format and contact bits, the fields the rest. A heart
    /// rate above 255 is always sent as uint16.
    public init(flags: Flags = [], heartRate: UInt16, energyExpended: UInt16? = nil, rrIntervals: [UInt16]? = nil) {
        self.flags = flags
        self.heartRate = heartRate
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
        self.flags = encodedFlags
    }

    @inlinable
    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        flags = Flags(rawValue: try reader.readUInt8("flags"))
        heartRate =
            flags.contains(.heartRateIsUInt16)
            ? try reader.readUInt16("heartRate") : UInt16(try reader.readUInt8("heartRate"))
        if flags.contains(.energyExpendedPresent) {
            energyExpended = try reader.readUInt16("energyExpended")
        }
        if flags.contains(.rrIntervalsPresent) {
            rrIntervals = try reader.readUInt16Array("rrIntervals")
        }
        trailingByteCount = reader.remainingCount
    }

    public var encodedFlags: Flags {
        var result = flags.subtracting([.energyExpendedPresent, .rrIntervalsPresent])
        if heartRate > 0xFF { result.insert(.heartRateIsUInt16) }
        if energyExpended != nil { result.insert(.energyExpendedPresent) }
        if rrIntervals != nil { result.insert(.rrIntervalsPresent) }
        return result
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        let flags = encodedFlags
        writer.write(flags.rawValue)
        if flags.contains(.heartRateIsUInt16) { writer.write(heartRate) } else { writer.write(UInt8(heartRate)) }
        if let energyExpended { writer.write(energyExpended) }
        rrIntervals?.forEach { writer.write($0) }
        return writer.bytes
    }

    public func appendFields(to fields: inout [DecodedField]) {
        let contact =
            switch sensorContact {
            case .notSupported: "contact not supported"
            case .notDetected: "contact supported, not detected"
            case .detected: "contact detected"
            }
        fields.append(.flags(flags.rawValue, names: Flags.names))
        fields.append(.unsigned("heartRate", heartRate, unit: "bpm", meaning: contact))
        if let energyExpended { fields.append(.unsigned("energyExpended", energyExpended, unit: "kJ")) }
        if let rrIntervals {
            fields.append(
                DecodedField(
                    "rrIntervals", .list(rrIntervals.map(Int64.init)), resolution: 1 / Self.rrTicksPerSecond, unit: "s")
            )
        }
        if trailingByteCount > 0 { fields.append(.unsigned("trailingBytes", trailingByteCount)) }
    }
}
