import CyclingSensors
import TrainerControl

/// One GATT service of the sensor hub as any transport serves it (Bluetooth through BlueZ, DirCon over TCP): its
/// characteristics, what each allows and what a read of each answers.
public struct HubService: Sendable, Equatable {
    public var uuid: UInt16
    public var characteristics: [HubCharacteristic]

    public init(_ uuid: UInt16, _ characteristics: [HubCharacteristic]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

public struct HubCharacteristic: Sendable, Equatable {
    public struct Properties: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let read = Properties(rawValue: 1 << 0)
        public static let write = Properties(rawValue: 1 << 1)
        public static let notify = Properties(rawValue: 1 << 2)
        public static let indicate = Properties(rawValue: 1 << 3)
    }

    public var uuid: UInt16
    public var properties: Properties
    /// What a read answers until the hub changes it.
    public var value: [UInt8]

    public init(_ uuid: UInt16, _ properties: Properties, value: [UInt8] = []) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
    }
}

extension HubService {
    /// The services the hub serves, with what a read of each characteristic answers: with the Fitness Machine's
    /// control when it passes an app's control to the trainer (what the Fitness Machine then declares follows the
    /// real trainer once it is connected: `HubMessage.trainerDeclared`).
    public static func hub(passingControl: Bool) -> [HubService] {
        [
            HubService(
                0x1818,
                [
                    .init(Characteristic.cyclingPowerMeasurement.rawValue, .notify),
                    // Crank Revolution Data Supported (CPS 3.2, bit 3): each measurement carries the hub's crank
                    // revolutions.
                    .init(
                        Characteristic.cyclingPowerFeature.rawValue, .read,
                        value: CyclingPowerFeature(features: .crankRevolutionData).encoded()),
                    // Other (0): the power is the fused one, not one sensor's on one part of the bike.
                    .init(Characteristic.sensorLocation.rawValue, .read, value: [0x00]),
                ]),
            HubService(
                0x1816,
                [
                    .init(Characteristic.cscMeasurement.rawValue, .notify),
                    // Wheel and crank revolution data (CSCS 3.2, bits 0 and 1).
                    .init(
                        Characteristic.cscFeature.rawValue, .read,
                        value: CSCFeature(features: [.wheelRevolutionData, .crankRevolutionData]).encoded()),
                    // Mandatory with wheel revolution data (CSCS 3.4): an app sets the cumulative wheel revolutions.
                    .init(Characteristic.scControlPoint.rawValue, [.write, .indicate]),
                ]),
            HubService(
                0x180D,
                [
                    .init(Characteristic.heartRateMeasurement.rawValue, .notify),
                    // Chest (1): the strap's place.
                    .init(Characteristic.bodySensorLocation.rawValue, .read, value: [0x01]),
                ]),
            HubService(
                0x1826,
                [
                    .init(
                        Characteristic.fitnessMachineFeature.rawValue, .read,
                        value: HubDeclaration.fitnessMachineFeatureWithoutControl.encoded()),
                    .init(Characteristic.indoorBikeData.rawValue, .notify),
                ] + (passingControl ? machineControl : [])),
        ]
    }

    /// The Fitness Machine's control: its control point (FTMS 4.16: write and indicate), its status, and the
    /// ranges of the targets it offers (mandatory with the power and resistance targets, FTMS 4.13 and 4.14).
    static let machineControl: [HubCharacteristic] = [
        .init(Characteristic.fitnessMachineControlPoint.rawValue, [.write, .indicate]),
        .init(Characteristic.fitnessMachineStatus.rawValue, .notify),
        .init(
            Characteristic.supportedPowerRange.rawValue, .read,
            value: TrainerCapabilities.assumedPowerRange.encoded()),
        .init(
            Characteristic.supportedResistanceLevelRange.rawValue, .read,
            value: HubDeclaration.supportedResistanceLevelRange.encoded()),
    ]
}
