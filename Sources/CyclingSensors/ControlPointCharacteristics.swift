/// A control-point or status characteristic: a `ControlPointMessage` read and written by its op-code table.
public protocol ControlPointCharacteristic: CharacteristicValue {
    /// The op-code tables of this characteristic.
    static var dialect: ControlPointDialect { get }
    var message: ControlPointMessage { get }
    init(message: ControlPointMessage)
}

extension ControlPointCharacteristic {
    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        self.init(message: try ControlPointMessage(decoding: bytes, dialect: Self.dialect))
    }

    public var fields: [DecodedField] { message.fields(dialect: Self.dialect) }

    /// The bytes of a request (or status message): `opCode` then its parameter values (wire integers) in
    /// table order.
    public static func request(_ opCode: UInt8, _ values: [Int64] = []) -> [UInt8] {
        dialect.encodeRequest(opCode, values)
    }

    /// The bytes of a response, as a sensor (or an emulated one) indicates it.
    public static func response(to opCode: UInt8, result: ControlPointResult, _ values: [Int64] = []) -> [UInt8] {
        dialect.encodeResponse(to: opCode, result: result, values)
    }
}

/// Cycling Power Control Point, 0x2A66 (write + indicate): CPS's procedures.
///
/// Decodes both what a client writes (requests) and what the sensor indicates (responses, first byte
/// 0x20). Parameter units: crank length 1/2 mm, chain and span length mm, chain weight g, sampling rate
/// Hz, offset in N or 1/32 N·m depending on Cycling Power Feature bit 16.
public struct CyclingPowerControlPoint: ControlPointCharacteristic {
    public static let characteristic = Characteristic.cyclingPowerControlPoint
    public var message: ControlPointMessage
    public init(message: ControlPointMessage) { self.message = message }

    public enum OpCode {
        public static let setCumulativeValue: UInt8 = 0x01
        public static let updateSensorLocation: UInt8 = 0x02
        public static let requestSupportedSensorLocations: UInt8 = 0x03
        public static let setCrankLength: UInt8 = 0x04
        public static let requestCrankLength: UInt8 = 0x05
        public static let startOffsetCompensation: UInt8 = 0x0C
        public static let requestSamplingRate: UInt8 = 0x0E
        public static let startEnhancedOffsetCompensation: UInt8 = 0x10
    }

    public static let dialect = ControlPointDialect(
        responseOpCode: 0x20,
        layouts: [
            OpCodeLayout(
                0x01, "Set Cumulative Value", [ParameterLayout("cumulativeWheelRevolutions", .uint32, unit: "rev")]),
            OpCodeLayout(0x02, "Update Sensor Location", [ParameterLayout("sensorLocation", .uint8)]),
            OpCodeLayout(
                0x03, "Request Supported Sensor Locations",
                response: [ParameterLayout("supportedSensorLocations", .uint8List)]),
            OpCodeLayout(
                0x04, "Set Crank Length", [ParameterLayout("crankLength", .uint16, resolution: 0.5, unit: "mm")]),
            OpCodeLayout(
                0x05, "Request Crank Length",
                response: [ParameterLayout("crankLength", .uint16, resolution: 0.5, unit: "mm")]),
            OpCodeLayout(0x06, "Set Chain Length", [ParameterLayout("chainLength", .uint16, unit: "mm")]),
            OpCodeLayout(0x07, "Request Chain Length", response: [ParameterLayout("chainLength", .uint16, unit: "mm")]),
            OpCodeLayout(0x08, "Set Chain Weight", [ParameterLayout("chainWeight", .uint16, unit: "g")]),
            OpCodeLayout(0x09, "Request Chain Weight", response: [ParameterLayout("chainWeight", .uint16, unit: "g")]),
            OpCodeLayout(0x0A, "Set Span Length", [ParameterLayout("spanLength", .uint16, unit: "mm")]),
            OpCodeLayout(0x0B, "Request Span Length", response: [ParameterLayout("spanLength", .uint16, unit: "mm")]),
            OpCodeLayout(0x0C, "Start Offset Compensation", response: [ParameterLayout("offsetCompensation", .sint16)]),
            OpCodeLayout(
                0x0D, "Mask Cycling Power Measurement Characteristic Content", [ParameterLayout("contentMask", .uint16)]
            ),
            OpCodeLayout(
                0x0E, "Request Sampling Rate", response: [ParameterLayout("samplingRate", .uint8, unit: "Hz")]),
            OpCodeLayout(
                0x0F, "Request Factory Calibration Date",
                response: [
                    ParameterLayout("year", .uint16), ParameterLayout("month", .uint8), ParameterLayout("day", .uint8),
                    ParameterLayout("hours", .uint8), ParameterLayout("minutes", .uint8),
                    ParameterLayout("seconds", .uint8),
                ]),
            // The layout after the offset (manufacturer ID and data) is not published: kept as bytes.
            OpCodeLayout(
                0x10, "Start Enhanced Offset Compensation",
                response: [
                    ParameterLayout("offsetCompensation", .sint16), ParameterLayout("manufacturerData", .uint8List),
                ]),
        ])

    /// Set Crank Length; the wire unit is 1/2 mm, so 172.5 mm is 345.
    public static func setCrankLength(halfMillimetres: UInt16) -> [UInt8] {
        request(OpCode.setCrankLength, [Int64(halfMillimetres)])
    }
}

/// SC Control Point, 0x2A55 (write + indicate), the Cycling Speed and Cadence Service's control point. Responses start 0x10.
public struct SCControlPoint: ControlPointCharacteristic {
    public static let characteristic = Characteristic.scControlPoint
    public var message: ControlPointMessage
    public init(message: ControlPointMessage) { self.message = message }

    public static let dialect = ControlPointDialect(
        responseOpCode: 0x10,
        layouts: [
            OpCodeLayout(
                0x01, "Set Cumulative Value", [ParameterLayout("cumulativeWheelRevolutions", .uint32, unit: "rev")]),
            OpCodeLayout(0x02, "Start Sensor Calibration"),
            OpCodeLayout(0x03, "Update Sensor Location", [ParameterLayout("sensorLocation", .uint8)]),
            OpCodeLayout(
                0x04, "Request Supported Sensor Locations",
                response: [ParameterLayout("supportedSensorLocations", .uint8List)]),
        ])

}

/// Fitness Machine Control Point, 0x2AD9 (write + indicate), FTMS. Responses start 0x80.
///
/// Set Target Resistance Level (0x04) is uint8 ×0.1 in some implementations and sint16 ×0.1 in others
/// (the published layouts disagree): this table reads the one-byte form; a two-byte parameter is an error that
/// names it, rather than a silent misreading.
public struct FitnessMachineControlPoint: ControlPointCharacteristic {
    public static let characteristic = Characteristic.fitnessMachineControlPoint
    public var message: ControlPointMessage
    public init(message: ControlPointMessage) { self.message = message }

    public enum OpCode {
        public static let requestControl: UInt8 = 0x00
        public static let reset: UInt8 = 0x01
        public static let setTargetResistanceLevel: UInt8 = 0x04
        public static let setTargetPower: UInt8 = 0x05
        public static let startOrResume: UInt8 = 0x07
        public static let stopOrPause: UInt8 = 0x08
        public static let setIndoorBikeSimulationParameters: UInt8 = 0x11
        public static let spinDownControl: UInt8 = 0x13
    }

    static let simulationParameters = [
        ParameterLayout("windSpeed", .sint16, resolution: 0.001, unit: "m/s"),
        ParameterLayout("grade", .sint16, resolution: 0.01, unit: "%"),
        ParameterLayout("rollingResistanceCoefficient", .uint8, resolution: 0.0001),
        ParameterLayout("windResistanceCoefficient", .uint8, resolution: 0.01, unit: "kg/m"),
    ]

    public static let dialect = ControlPointDialect(
        responseOpCode: 0x80,
        layouts: [
            OpCodeLayout(0x00, "Request Control"),
            OpCodeLayout(0x01, "Reset"),
            OpCodeLayout(
                0x02, "Set Target Speed", [ParameterLayout("targetSpeed", .uint16, resolution: 0.01, unit: "km/h")]),
            OpCodeLayout(
                0x03, "Set Target Inclination",
                [ParameterLayout("targetInclination", .sint16, resolution: 0.1, unit: "%")]),
            OpCodeLayout(
                0x04, "Set Target Resistance Level", [ParameterLayout("targetResistanceLevel", .uint8, resolution: 0.1)]
            ),
            OpCodeLayout(0x05, "Set Target Power", [ParameterLayout("targetPower", .sint16, unit: "W")]),
            OpCodeLayout(0x06, "Set Target Heart Rate", [ParameterLayout("targetHeartRate", .uint8, unit: "bpm")]),
            OpCodeLayout(0x07, "Start or Resume"),
            OpCodeLayout(0x08, "Stop or Pause", [ParameterLayout("stopOrPause", .uint8)]),
            OpCodeLayout(
                0x09, "Set Targeted Expended Energy", [ParameterLayout("targetedExpendedEnergy", .uint16, unit: "kcal")]
            ),
            OpCodeLayout(0x0A, "Set Targeted Number of Steps", [ParameterLayout("targetedNumberOfSteps", .uint16)]),
            OpCodeLayout(0x0B, "Set Targeted Number of Strides", [ParameterLayout("targetedNumberOfStrides", .uint16)]),
            OpCodeLayout(0x0C, "Set Targeted Distance", [ParameterLayout("targetedDistance", .uint24, unit: "m")]),
            OpCodeLayout(
                0x0D, "Set Targeted Training Time", [ParameterLayout("targetedTrainingTime", .uint16, unit: "s")]),
            OpCodeLayout(
                0x0E, "Set Targeted Time in Two Heart Rate Zones",
                [ParameterLayout("targetedTimeInZones", .uint16List, unit: "s")]),
            OpCodeLayout(
                0x0F, "Set Targeted Time in Three Heart Rate Zones",
                [ParameterLayout("targetedTimeInZones", .uint16List, unit: "s")]),
            OpCodeLayout(
                0x10, "Set Targeted Time in Five Heart Rate Zones",
                [ParameterLayout("targetedTimeInZones", .uint16List, unit: "s")]),
            OpCodeLayout(0x11, "Set Indoor Bike Simulation Parameters", simulationParameters),
            OpCodeLayout(
                0x12, "Set Wheel Circumference",
                [ParameterLayout("wheelCircumference", .uint16, resolution: 0.1, unit: "mm")]),
            OpCodeLayout(
                0x13, "Spin Down Control", [ParameterLayout("spinDownControl", .uint8)],
                response: [
                    ParameterLayout("targetSpeedLow", .uint16, resolution: 0.01, unit: "km/h"),
                    ParameterLayout("targetSpeedHigh", .uint16, resolution: 0.01, unit: "km/h"),
                ]),
            OpCodeLayout(
                0x14, "Set Targeted Cadence",
                [ParameterLayout("targetedCadence", .uint16, resolution: 0.5, unit: "rpm")]),
        ])

    /// Set Target Power in watts (sint16).
    public static func setTargetPower(watts: Int16) -> [UInt8] { request(OpCode.setTargetPower, [Int64(watts)]) }
}

/// Fitness Machine Status, 0x2ADA (notify): an op code and its parameter (FTMS).
public struct FitnessMachineStatus: ControlPointCharacteristic {
    public static let characteristic = Characteristic.fitnessMachineStatus
    public var message: ControlPointMessage
    public init(message: ControlPointMessage) { self.message = message }

    public static let dialect = ControlPointDialect(
        responseOpCode: nil,
        layouts: [
            OpCodeLayout(0x01, "Reset"),
            OpCodeLayout(0x02, "Stopped or Paused by the User", [ParameterLayout("stopOrPause", .uint8)]),
            OpCodeLayout(0x03, "Stopped by Safety Key"),
            OpCodeLayout(0x04, "Started or Resumed by the User"),
            OpCodeLayout(
                0x05, "Target Speed Changed", [ParameterLayout("targetSpeed", .uint16, resolution: 0.01, unit: "km/h")]),
            OpCodeLayout(
                0x06, "Target Incline Changed",
                [ParameterLayout("targetInclination", .sint16, resolution: 0.1, unit: "%")]),
            OpCodeLayout(
                0x07, "Target Resistance Level Changed",
                [ParameterLayout("targetResistanceLevel", .uint8, resolution: 0.1)]),
            OpCodeLayout(0x08, "Target Power Changed", [ParameterLayout("targetPower", .sint16, unit: "W")]),
            OpCodeLayout(0x09, "Target Heart Rate Changed", [ParameterLayout("targetHeartRate", .uint8, unit: "bpm")]),
            OpCodeLayout(
                0x0A, "Targeted Expended Energy Changed",
                [ParameterLayout("targetedExpendedEnergy", .uint16, unit: "kcal")]),
            OpCodeLayout(0x0B, "Targeted Number of Steps Changed", [ParameterLayout("targetedNumberOfSteps", .uint16)]),
            OpCodeLayout(
                0x0C, "Targeted Number of Strides Changed", [ParameterLayout("targetedNumberOfStrides", .uint16)]),
            OpCodeLayout(0x0D, "Targeted Distance Changed", [ParameterLayout("targetedDistance", .uint24, unit: "m")]),
            OpCodeLayout(
                0x0E, "Targeted Training Time Changed", [ParameterLayout("targetedTrainingTime", .uint16, unit: "s")]),
            OpCodeLayout(
                0x0F, "Targeted Time in Two Heart Rate Zones Changed",
                [ParameterLayout("targetedTimeInZones", .uint16List, unit: "s")]),
            OpCodeLayout(
                0x10, "Targeted Time in Three Heart Rate Zones Changed",
                [ParameterLayout("targetedTimeInZones", .uint16List, unit: "s")]),
            OpCodeLayout(
                0x11, "Targeted Time in Five Heart Rate Zones Changed",
                [ParameterLayout("targetedTimeInZones", .uint16List, unit: "s")]),
            OpCodeLayout(
                0x12, "Indoor Bike Simulation Parameters Changed", FitnessMachineControlPoint.simulationParameters),
            OpCodeLayout(
                0x13, "Wheel Circumference Changed",
                [ParameterLayout("wheelCircumference", .uint16, resolution: 0.1, unit: "mm")]),
            OpCodeLayout(0x14, "Spin Down Status", [ParameterLayout("spinDownStatus", .uint8)]),
            OpCodeLayout(
                0x15, "Targeted Cadence Changed",
                [ParameterLayout("targetedCadence", .uint16, resolution: 0.5, unit: "rpm")]),
            OpCodeLayout(0xFF, "Control Permission Lost"),
        ])

    public enum OpCode {
        public static let reset: UInt8 = 0x01
        public static let stoppedOrPausedByUser: UInt8 = 0x02
        public static let stoppedBySafetyKey: UInt8 = 0x03
        public static let targetResistanceLevelChanged: UInt8 = 0x07
        public static let targetPowerChanged: UInt8 = 0x08
        public static let indoorBikeSimulationParametersChanged: UInt8 = 0x12
        public static let spinDownStatus: UInt8 = 0x14
        public static let controlPermissionLost: UInt8 = 0xFF
    }

    /// The bytes of a status message with `opCode` and its parameter values.
    public static func encode(_ opCode: UInt8, _ values: [Int64] = []) -> [UInt8] { request(opCode, values) }
}
