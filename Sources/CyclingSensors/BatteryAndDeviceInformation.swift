/// Battery Level, 0x2A19 (read, notify optional): uint8 percent (Battery Service). Values 101–255 are
/// reserved; they decode (kept raw) and are marked, since a lying sensor should not stop a ride.
public struct BatteryLevel: CharacteristicValue {
    public static let characteristic = Characteristic.batteryLevel
    /// Percent, 0–100 when conformant.
    public var percent: UInt8

    public init(percent: UInt8) { self.percent = percent }

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        percent = try reader.readUInt8("batteryLevel")
        try reader.expectEnd()
    }

    public var fields: [DecodedField] {
        [.unsigned("batteryLevel", percent, unit: "%", meaning: percent > 100 ? "reserved value (over 100 %)" : nil)]
    }
}

/// A Device Information string (manufacturer, model, serial, hardware/firmware/software revision):
/// the whole value is UTF-8 with no length or terminator. Real devices append NULs or spaces, which
/// are trimmed (Device Information Service).
public struct DeviceInformationString: Equatable, Sendable {
    public var characteristic: Characteristic
    public var text: String

    public init(decoding bytes: [UInt8], characteristic: Characteristic) throws(MalformedPayload) {
        self.characteristic = characteristic
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0 || bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 {
            end -= 1
        }
        guard let text = String(validating: bytes[..<end], as: UTF8.self) else {
            throw MalformedPayload(field: characteristic.jsonKey, offset: 0, reason: .invalidValue("not UTF-8"))
        }
        self.text = text
    }

    public var fields: [DecodedField] { [DecodedField(characteristic.jsonKey, .text(text))] }
}
