/// Sensor Location, 0x2A5D (read, uint8), shared by Cycling Power and CSC (GATT Specification Supplement).
/// Values 17–255 are reserved; they decode (kept raw) and are named as reserved.
public struct SensorLocation: CharacteristicValue, RawRepresentable, Hashable {
    public static let characteristic = Characteristic.sensorLocation
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let other = SensorLocation(rawValue: 0)
    public static let frontWheel = SensorLocation(rawValue: 4)
    public static let leftCrank = SensorLocation(rawValue: 5)
    public static let rightCrank = SensorLocation(rawValue: 6)
    public static let leftPedal = SensorLocation(rawValue: 7)
    public static let rightPedal = SensorLocation(rawValue: 8)
    public static let rearWheel = SensorLocation(rawValue: 12)
    public static let rearHub = SensorLocation(rawValue: 13)
    public static let spider = SensorLocation(rawValue: 15)

    static let names = [
        "Other", "Top of shoe", "In shoe", "Hip", "Front Wheel", "Left Crank", "Right Crank", "Left Pedal",
        "Right Pedal", "Front Hub", "Rear Dropout", "Chainstay", "Rear Wheel", "Rear Hub", "Chest", "Spider",
        "Chain Ring",
    ]

    /// The SIG name, or "reserved (N)".
    public var name: String {
        Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : "reserved (\(rawValue))"
    }

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        rawValue = try reader.readUInt8("sensorLocation")
        try reader.expectEnd()
    }

    public var fields: [DecodedField] { [.unsigned("sensorLocation", rawValue, meaning: name)] }
}

/// Body Sensor Location, 0x2A38 (read, uint8), GATT Specification Supplement. Values 7–255 are reserved.
public struct BodySensorLocation: CharacteristicValue, RawRepresentable, Hashable {
    public static let characteristic = Characteristic.bodySensorLocation
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    static let names = ["Other", "Chest", "Wrist", "Finger", "Hand", "Ear Lobe", "Foot"]

    public var name: String {
        Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : "reserved (\(rawValue))"
    }

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        rawValue = try reader.readUInt8("bodySensorLocation")
        try reader.expectEnd()
    }

    public var fields: [DecodedField] { [.unsigned("bodySensorLocation", rawValue, meaning: name)] }
}
