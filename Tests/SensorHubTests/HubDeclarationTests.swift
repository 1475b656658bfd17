import CyclingSensors
import Testing
import TrainerControl

@testable import SensorHub

/// The hub's read characteristics byte for byte, as the Fitness Machine Service 1.0 lays them out (4.3, 4.14,
/// 4.15): little-endian uint32 bit fields; sint16 minimum, sint16 maximum, uint16 increment.
@Suite struct HubDeclarationTests {
    @Test func theFeaturesOfferOnlyTheTargetsTheRealTrainerTakes() throws {
        let full = TrainerCapabilities(
            features: FitnessMachineFeature(targets: [.power, .resistance, .indoorBikeSimulation, .spinDown]))
        // Machine: cadence (bit 1), heart rate (10), power (14) = 0x00004402. Targets: resistance (2), power (3),
        // simulation (13) = 0x0000200C; the spin-down (15) is not offered.
        let declared = HubDeclaration.fitnessMachineFeature(of: full).encoded()
        #expect(declared == [0x02, 0x44, 0x00, 0x00, 0x0C, 0x20, 0x00, 0x00])
        let decoded = try FitnessMachineFeature(decoding: declared)
        #expect(decoded.supports(.power) && decoded.supports(.resistance) && decoded.supports(.indoorBikeSimulation))
        #expect(!decoded.supports(.spinDown))

        let powerOnly = TrainerCapabilities(features: FitnessMachineFeature(targets: [.power]))
        #expect(
            HubDeclaration.fitnessMachineFeature(of: powerOnly).encoded() == [
                0x02, 0x44, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
            ])
        // A trainer that declares no features: the hub offers no target at all.
        #expect(
            HubDeclaration.fitnessMachineFeature(of: TrainerCapabilities(features: nil)).encoded() == [
                0x02, 0x44, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            ])
    }

    @Test func thePowerRangeIsTheRealTrainersAndTheResistanceLevelsTheHubsOwn() {
        let declared = TrainerCapabilities(
            features: FitnessMachineFeature(targets: [.power]),
            powerRange: SupportedRange(minimum: 25, maximum: 1500, minimumIncrement: 5))
        // 25 = 0x0019, 1500 = 0x05DC, 5.
        #expect(HubDeclaration.supportedPowerRange(of: declared).encoded() == [0x19, 0x00, 0xDC, 0x05, 0x05, 0x00])
        // None declared: 0 to 2000 W (0x07D0) in 1 W steps.
        let undeclared = TrainerCapabilities(features: FitnessMachineFeature(targets: [.power]))
        #expect(HubDeclaration.supportedPowerRange(of: undeclared).encoded() == [0x00, 0x00, 0xD0, 0x07, 0x01, 0x00])
        // 0 to 25.5 in steps of 0.1: 0, 255, 1 in tenths.
        #expect(HubDeclaration.supportedResistanceLevelRange.encoded() == [0x00, 0x00, 0xFF, 0x00, 0x01, 0x00])
        let negative = SupportedRange(minimum: -100, maximum: 100, minimumIncrement: 1)
        #expect(negative.encoded() == [0x9C, 0xFF, 0x64, 0x00, 0x01, 0x00])
    }
}
