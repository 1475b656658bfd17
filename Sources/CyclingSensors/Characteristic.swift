/// Every GATT characteristic cyclelog decodes, by its 16-bit SIG UUID.
public enum Characteristic: UInt16, CaseIterable, Sendable {
    case cyclingPowerMeasurement = 0x2A63
    case cyclingPowerVector = 0x2A64
    case cyclingPowerFeature = 0x2A65
    case sensorLocation = 0x2A5D
    case cyclingPowerControlPoint = 0x2A66
    case cscMeasurement = 0x2A5B
    case cscFeature = 0x2A5C
    case scControlPoint = 0x2A55
    case heartRateMeasurement = 0x2A37
    case bodySensorLocation = 0x2A38
    case indoorBikeData = 0x2AD2
    case trainingStatus = 0x2AD3
    case supportedInclinationRange = 0x2AD5
    case supportedResistanceLevelRange = 0x2AD6
    case supportedPowerRange = 0x2AD8
    case fitnessMachineFeature = 0x2ACC
    case fitnessMachineControlPoint = 0x2AD9
    case fitnessMachineStatus = 0x2ADA
    case batteryLevel = 0x2A19
    case manufacturerNameString = 0x2A29
    case modelNumberString = 0x2A24
    case serialNumberString = 0x2A25
    case hardwareRevisionString = 0x2A27
    case firmwareRevisionString = 0x2A26
    case softwareRevisionString = 0x2A28

    /// The name used on the command line, e.g. `cycling-power-measurement`.
    public var name: String {
        switch self {
        case .cyclingPowerMeasurement: "cycling-power-measurement"
        case .cyclingPowerVector: "cycling-power-vector"
        case .cyclingPowerFeature: "cycling-power-feature"
        case .sensorLocation: "sensor-location"
        case .cyclingPowerControlPoint: "cycling-power-control-point"
        case .cscMeasurement: "csc-measurement"
        case .cscFeature: "csc-feature"
        case .scControlPoint: "sc-control-point"
        case .heartRateMeasurement: "heart-rate-measurement"
        case .bodySensorLocation: "body-sensor-location"
        case .indoorBikeData: "indoor-bike-data"
        case .trainingStatus: "training-status"
        case .supportedInclinationRange: "supported-inclination-range"
        case .supportedResistanceLevelRange: "supported-resistance-level-range"
        case .supportedPowerRange: "supported-power-range"
        case .fitnessMachineFeature: "fitness-machine-feature"
        case .fitnessMachineControlPoint: "fitness-machine-control-point"
        case .fitnessMachineStatus: "fitness-machine-status"
        case .batteryLevel: "battery-level"
        case .manufacturerNameString: "manufacturer-name-string"
        case .modelNumberString: "model-number-string"
        case .serialNumberString: "serial-number-string"
        case .hardwareRevisionString: "hardware-revision-string"
        case .firmwareRevisionString: "firmware-revision-string"
        case .softwareRevisionString: "software-revision-string"
        }
    }

    /// The lowerCamelCase form of `name`, used as a JSON key for single-value characteristics.
    public var jsonKey: String {
        let words = name.split(separator: "-")
        return (words.first.map(String.init) ?? "")
            + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// The 128-bit UUID in BlueZ's lower-case form.
    public var uuidString: String { "0000\(hexDigits(rawValue))-0000-1000-8000-00805f9b34fb" }

    /// Finds a characteristic by `2a63`, `0x2A63`, the 128-bit UUID (any case) or its name.
    public init?(identifier: String) {
        let lowered = identifier.lowercased()
        if let match = Self.allCases.first(where: { $0.name == lowered }) {
            self = match
            return
        }
        var hexText = Substring(lowered)
        if hexText.count == 36, hexText.hasSuffix("-0000-1000-8000-00805f9b34fb"), hexText.hasPrefix("0000") {
            hexText = hexText.dropFirst(4).prefix(4)
        } else if hexText.hasPrefix("0x") {
            hexText = hexText.dropFirst(2)
        }
        guard hexText.count == 4, let value = UInt16(hexText, radix: 16), let match = Self(rawValue: value) else {
            return nil
        }
        self = match
    }

    /// Decodes `bytes` as this characteristic and appends the fields to `fields` (a list the caller reuses: the
    /// measurements a log is made of then cost no list each).
    public func decodeFields(_ bytes: [UInt8], into fields: inout [DecodedField]) throws(MalformedPayload) {
        switch self {
        case .cyclingPowerMeasurement: try CyclingPowerMeasurement(decoding: bytes).appendFields(to: &fields)
        case .cscMeasurement: try CSCMeasurement(decoding: bytes).appendFields(to: &fields)
        case .heartRateMeasurement: try HeartRateMeasurement(decoding: bytes).appendFields(to: &fields)
        case .indoorBikeData: try IndoorBikeData(decoding: bytes).appendFields(to: &fields)
        default: fields += try decodeFields(bytes)
        }
    }

    /// Decodes one value of this characteristic into its fields (what `cyclelog decode` prints).
    public func decodeFields(_ bytes: [UInt8]) throws(MalformedPayload) -> [DecodedField] {
        switch self {
        case .cyclingPowerMeasurement: try CyclingPowerMeasurement(decoding: bytes).fields
        case .cyclingPowerVector: try CyclingPowerVector(decoding: bytes).fields
        case .cyclingPowerFeature: try CyclingPowerFeature(decoding: bytes).fields
        case .sensorLocation: try SensorLocation(decoding: bytes).fields
        case .cyclingPowerControlPoint: try CyclingPowerControlPoint(decoding: bytes).fields
        case .cscMeasurement: try CSCMeasurement(decoding: bytes).fields
        case .cscFeature: try CSCFeature(decoding: bytes).fields
        case .scControlPoint: try SCControlPoint(decoding: bytes).fields
        case .heartRateMeasurement: try HeartRateMeasurement(decoding: bytes).fields
        case .bodySensorLocation: try BodySensorLocation(decoding: bytes).fields
        case .indoorBikeData: try IndoorBikeData(decoding: bytes).fields
        case .trainingStatus: try TrainingStatus(decoding: bytes).fields
        case .supportedInclinationRange: try SupportedInclinationRange(decoding: bytes).fields
        case .supportedResistanceLevelRange: try SupportedResistanceLevelRange(decoding: bytes).fields
        case .supportedPowerRange: try SupportedPowerRange(decoding: bytes).fields
        case .fitnessMachineFeature: try FitnessMachineFeature(decoding: bytes).fields
        case .fitnessMachineControlPoint: try FitnessMachineControlPoint(decoding: bytes).fields
        case .fitnessMachineStatus: try FitnessMachineStatus(decoding: bytes).fields
        case .batteryLevel: try BatteryLevel(decoding: bytes).fields
        case .manufacturerNameString, .modelNumberString, .serialNumberString, .hardwareRevisionString,
            .firmwareRevisionString, .softwareRevisionString:
            try DeviceInformationString(decoding: bytes, characteristic: self).fields
        }
    }
}

func hexDigits(_ value: UInt16) -> String {
    hex(UInt8(value >> 8)).lowercased() + hex(UInt8(value & 0xFF)).lowercased()
}
