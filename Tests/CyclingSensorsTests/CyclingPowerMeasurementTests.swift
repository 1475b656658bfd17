import CyclingSensors
import TestSupport
import XCTest

final class CyclingPowerMeasurementTests: XCTestCase {
    typealias CPM = CyclingPowerMeasurement

    func testFlagsZeroIsPowerOnly() throws {
        // pycycling's test vector: 0x04D2 = 1234 W.
        let value = try CPM(decoding: bytes("00 00 D2 04"))
        XCTAssertEqual(value.flags, [])
        XCTAssertEqual(value.instantaneousPower, 1234)
        XCTAssertNil(value.pedalPowerBalance)
        XCTAssertNil(value.crankRevolutionData)
        XCTAssertEqual(value.trailingByteCount, 0)
        XCTAssertEqual(try CPM(decoding: bytes("00 00 28 00")).instantaneousPower, 40)  // OpenTracks' test vector
    }

    func testPowerIsSigned() throws {
        // Constructed: 0xFFFB is −5 W (pycycling reports 65531).
        XCTAssertEqual(try CPM(decoding: bytes("00 00 FB FF")).instantaneousPower, -5)
        XCTAssertEqual(try CPM(decoding: bytes("00 00 00 80")).instantaneousPower, -32768)
        XCTAssertEqual(try CPM(decoding: bytes("00 00 FF 7F")).instantaneousPower, 32767)
    }

    func testWheelAndCrankAtTheirMaximum() throws {
        // pycycling's test vector: wheel revs 0xFFFFFFFF, wheel time 0x3F03 = 16131 (1/2048 s), crank 0x07FF, time 0x0FE7.
        let value = try CPM(decoding: bytes("30 00 D2 04 FF FF FF FF 03 3F FF 07 E7 0F"))
        XCTAssertEqual(value.flags, [.wheelRevolutionDataPresent, .crankRevolutionDataPresent])
        XCTAssertEqual(
            value.wheelRevolutionData,
            WheelRevolutionData(cumulativeWheelRevolutions: 4_294_967_295, lastWheelEventTime: 16131))
        XCTAssertEqual(
            value.crankRevolutionData, CrankRevolutionData(cumulativeCrankRevolutions: 2047, lastCrankEventTime: 4071))
        let maxed = try CPM(decoding: bytes("30 00 00 00 FF FF FF FF FF FF FF FF FF FF"))
        XCTAssertEqual(maxed.wheelRevolutionData?.lastWheelEventTime, 0xFFFF)
        XCTAssertEqual(maxed.crankRevolutionData?.cumulativeCrankRevolutions, 0xFFFF)
        XCTAssertEqual(CPM.wheelTicksPerSecond, 2048)
    }

    func testTorqueAndCrank() throws {
        // OpenTracks' test vector: flags 0x2C; torque 0x009F = 159 (4.96875 N·m, crank-based); crank 12 @ 0x42E5.
        let value = try CPM(decoding: bytes("2C 00 00 00 9F 00 0C 00 E5 42"))
        XCTAssertEqual(
            value.flags, [.accumulatedTorquePresent, .accumulatedTorqueSourceCrank, .crankRevolutionDataPresent])
        XCTAssertEqual(value.accumulatedTorque, 159)
        XCTAssertEqual(
            value.crankRevolutionData, CrankRevolutionData(cumulativeCrankRevolutions: 12, lastCrankEventTime: 17125))
    }

    func testBalanceWithLeftReference() throws {
        // Constructed: balance 0x62 = 98 half-percent = 49.0 % of the left pedal.
        let value = try CPM(decoding: bytes("03 00 2C 01 62"))
        XCTAssertEqual(value.instantaneousPower, 300)
        XCTAssertEqual(value.pedalPowerBalance, 98)
        XCTAssertTrue(value.flags.contains(.pedalPowerBalanceReferenceLeft))
    }

    func testTorqueCrankAndEnergy() throws {
        // Constructed: flags 0x082C; torque 0x0320 = 800; crank 27 @ 0xF5C0 = 62912; energy 0x0039 = 57 kJ.
        let value = try CPM(decoding: bytes("2C 08 96 00 20 03 1B 00 C0 F5 39 00"))
        XCTAssertEqual(value.instantaneousPower, 150)
        XCTAssertEqual(value.accumulatedTorque, 800)
        XCTAssertEqual(
            value.crankRevolutionData, CrankRevolutionData(cumulativeCrankRevolutions: 27, lastCrankEventTime: 62912))
        XCTAssertEqual(value.accumulatedEnergy, 57)
    }

    static let allFlags = bytes(
        "FF 1F C8 00 64 40 06 34 12 00 00 00 08 00 01 00 04 F4 01 9C FF 20 03 E0 FF B4 A0 05 0A 00 BE 00 64 00")

    func testAllFlags() throws {
        // Constructed: every one of the 13 defined bits.
        let value = try CPM(decoding: Self.allFlags)
        XCTAssertEqual(value.flags.rawValue, 0x1FFF)
        XCTAssertEqual(value.instantaneousPower, 200)
        XCTAssertEqual(value.pedalPowerBalance, 100)
        XCTAssertEqual(value.accumulatedTorque, 1600)
        XCTAssertEqual(
            value.wheelRevolutionData, WheelRevolutionData(cumulativeWheelRevolutions: 4660, lastWheelEventTime: 2048))
        XCTAssertEqual(
            value.crankRevolutionData, CrankRevolutionData(cumulativeCrankRevolutions: 256, lastCrankEventTime: 1024))
        XCTAssertEqual(value.extremeForceMagnitudes, .init(maximum: 500, minimum: -100))
        XCTAssertEqual(value.extremeTorqueMagnitudes, .init(maximum: 800, minimum: -32))
        // B4 A0 05 → little-endian 0x05A0B4: low 12 bits 0x0B4 = 180 (max), high 12 bits 0x05A = 90 (min).
        XCTAssertEqual(value.extremeAngles, .init(maximumAngle: 180, minimumAngle: 90))
        XCTAssertEqual(value.topDeadSpotAngle, 10)
        XCTAssertEqual(value.bottomDeadSpotAngle, 190)
        XCTAssertEqual(value.accumulatedEnergy, 100)
        XCTAssertTrue(value.flags.contains(.offsetCompensationIndicator))
    }

    func testExtremeAnglesPackingFromTheSIGExample() throws {
        // SIG XML example: max 0xABC, min 0x123 → 0x123ABC → wire BC 3A 12.
        let value = try CPM(decoding: bytes("00 01 00 00 BC 3A 12"))
        XCTAssertEqual(value.extremeAngles, .init(maximumAngle: 0xABC, minimumAngle: 0x123))
        XCTAssertEqual(value.encoded(), bytes("00 01 00 00 BC 3A 12"))
    }

    /// Each flag bit alone, with the field it announces (or none, for qualifier bits).
    func testEachFlagAlone() throws {
        let power = "2C 01"  // 300 W
        let cases: [(flags: String, field: String, check: (CPM) -> Bool)] = [
            ("01 00", "62", { $0.pedalPowerBalance == 98 }),
            ("02 00", "", { $0.flags == [.pedalPowerBalanceReferenceLeft] && $0.pedalPowerBalance == nil }),
            ("04 00", "20 03", { $0.accumulatedTorque == 800 }),
            ("08 00", "", { $0.flags == [.accumulatedTorqueSourceCrank] && $0.accumulatedTorque == nil }),
            (
                "10 00", "10 27 00 00 00 20",
                { $0.wheelRevolutionData == .init(cumulativeWheelRevolutions: 10000, lastWheelEventTime: 8192) }
            ),
            (
                "20 00", "2A 00 00 40",
                { $0.crankRevolutionData == .init(cumulativeCrankRevolutions: 42, lastCrankEventTime: 16384) }
            ),
            ("40 00", "F4 01 9C FF", { $0.extremeForceMagnitudes == .init(maximum: 500, minimum: -100) }),
            ("80 00", "20 03 E0 FF", { $0.extremeTorqueMagnitudes == .init(maximum: 800, minimum: -32) }),
            ("00 01", "B4 A0 05", { $0.extremeAngles == .init(maximumAngle: 180, minimumAngle: 90) }),
            ("00 02", "0A 00", { $0.topDeadSpotAngle == 10 }),
            ("00 04", "BE 00", { $0.bottomDeadSpotAngle == 190 }),
            ("00 08", "39 00", { $0.accumulatedEnergy == 57 }),
            ("00 10", "", { $0.flags == [.offsetCompensationIndicator] }),
        ]
        for (flags, field, check) in cases {
            let value = try CPM(decoding: bytes(flags + power + field))
            XCTAssertEqual(value.instantaneousPower, 300, flags)
            XCTAssertTrue(check(value), "flags \(flags)")
            XCTAssertEqual(value.trailingByteCount, 0, flags)
        }
    }

    func testEveryPrefixOfTheAllFlagsValueFails() {
        // Field sizes from the GATT Specification Supplement's table.
        let layout: Layout = [
            ("flags", 2), ("instantaneousPower", 2), ("pedalPowerBalance", 1), ("accumulatedTorque", 2),
            ("cumulativeWheelRevolutions", 4), ("lastWheelEventTime", 2), ("cumulativeCrankRevolutions", 2),
            ("lastCrankEventTime", 2), ("maximumForceMagnitude", 2), ("minimumForceMagnitude", 2),
            ("maximumTorqueMagnitude", 2), ("minimumTorqueMagnitude", 2), ("extremeAngles", 3),
            ("topDeadSpotAngle", 2), ("bottomDeadSpotAngle", 2), ("accumulatedEnergy", 2),
        ]
        assertEveryPrefixFails(CPM.self, Self.allFlags, layout: layout)
    }

    func testReservedFlagBitsAreKeptAndIgnored() throws {
        let value = try CPM(decoding: bytes("20 E0 FA 00 2A 00 00 40"))
        XCTAssertEqual(value.flags.rawValue, 0xE020)
        XCTAssertTrue(value.flags.isSuperset(of: .reserved))
        XCTAssertEqual(value.instantaneousPower, 250)
        XCTAssertEqual(value.crankRevolutionData?.cumulativeCrankRevolutions, 42)
        XCTAssertEqual(value.encoded(), bytes("20 E0 FA 00 2A 00 00 40"), "reserved bits survive encoding")
    }

    func testTrailingBytesAreToleratedAndCounted() throws {
        let value = try CPM(decoding: bytes("00 00 FA 00 AA BB"))
        XCTAssertEqual(value.instantaneousPower, 250)
        XCTAssertEqual(value.trailingByteCount, 2)
    }

    func testFlagsPromisingMoreThanSentNameTheMissingField() {
        // Crank data announced, only the revolutions sent: the event time at offset 6 is missing.
        assertMalformed(
            CPM.self, bytes("20 00 FA 00 2A 00"), field: "lastCrankEventTime", offset: 6,
            .truncated(needed: 2, available: 0))
        assertMalformed(CPM.self, [], field: "flags", offset: 0, .truncated(needed: 2, available: 0))
    }

    /// decode(encode(x)) == x for all 8192 combinations of the 13 defined flag bits.
    func testRoundTripOverAllFlagCombinations() throws {
        var random = SplitMix64(seed: 0x2A63)
        for rawFlags in UInt16(0)...0x1FFF {
            let flags = CPM.Flags(rawValue: rawFlags)
            var value = CPM(instantaneousPower: .random(in: .min ... .max, using: &random))
            value.flags = flags
            if flags.contains(.pedalPowerBalancePresent) {
                value.pedalPowerBalance = .random(in: 0...255, using: &random)
            }
            if flags.contains(.accumulatedTorquePresent) {
                value.accumulatedTorque = .random(in: 0 ... .max, using: &random)
            }
            if flags.contains(.wheelRevolutionDataPresent) {
                value.wheelRevolutionData = .random(using: &random)
            }
            if flags.contains(.crankRevolutionDataPresent) {
                value.crankRevolutionData = .random(using: &random)
            }
            if flags.contains(.extremeForceMagnitudesPresent) {
                value.extremeForceMagnitudes = .init(
                    maximum: .random(in: .min ... .max, using: &random),
                    minimum: .random(in: .min ... .max, using: &random))
            }
            if flags.contains(.extremeTorqueMagnitudesPresent) {
                value.extremeTorqueMagnitudes = .init(
                    maximum: .random(in: .min ... .max, using: &random),
                    minimum: .random(in: .min ... .max, using: &random))
            }
            if flags.contains(.extremeAnglesPresent) {
                value.extremeAngles = .init(
                    maximumAngle: .random(in: 0...0xFFF, using: &random),
                    minimumAngle: .random(in: 0...0xFFF, using: &random))
            }
            if flags.contains(.topDeadSpotAnglePresent) {
                value.topDeadSpotAngle = .random(in: 0 ... .max, using: &random)
            }
            if flags.contains(.bottomDeadSpotAnglePresent) {
                value.bottomDeadSpotAngle = .random(in: 0 ... .max, using: &random)
            }
            if flags.contains(.accumulatedEnergyPresent) {
                value.accumulatedEnergy = .random(in: 0 ... .max, using: &random)
            }
            let encoded = value.encoded()
            XCTAssertEqual(Array(encoded.prefix(2)), [UInt8(rawFlags & 0xFF), UInt8(rawFlags >> 8)])
            XCTAssertEqual(try CPM(decoding: encoded), value, "flags 0x\(String(rawFlags, radix: 16))")
        }
    }
}
