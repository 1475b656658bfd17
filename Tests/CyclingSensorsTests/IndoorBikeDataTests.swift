import CyclingSensors
import TestSupport
import XCTest

final class IndoorBikeDataTests: XCTestCase {
    func testRealIConsoleRecord() throws {
        // A real iConsole+ bike: flags 0x0B74.
        let value = try IndoorBikeData(
            decoding: bytes("74 0B 3C 05 48 00 21 00 00 01 00 18 00 02 00 00 00 00 56 10 00"))
        XCTAssertEqual(value.instantaneousSpeed, 1340)  // 13.40 km/h
        XCTAssertEqual(value.instantaneousCadence, 72)  // 36.0 rpm
        XCTAssertEqual(value.totalDistance, 33)
        XCTAssertEqual(value.resistanceLevel, 1)
        XCTAssertEqual(value.instantaneousPower, 24)
        XCTAssertEqual(value.expendedEnergy, .init(totalEnergy: 2, energyPerHour: 0, energyPerMinute: 0))
        XCTAssertEqual(value.heartRate, 86)
        XCTAssertEqual(value.elapsedTime, 16)
        XCTAssertNil(value.averageSpeed)
    }

    func testMoreDataMeansNoSpeed() throws {
        // 0x0251 has bit 0 set, so the first field is the distance 0x0030D4 = 12 500 m.
        let value = try IndoorBikeData(decoding: bytes("51 02 D4 30 00 FA 00 8C"))
        XCTAssertNil(value.instantaneousSpeed)
        XCTAssertFalse(value.endsRecord)
        XCTAssertEqual(value.totalDistance, 12500)
        XCTAssertEqual(value.instantaneousPower, 250)
        XCTAssertEqual(value.heartRate, 140)
    }

    func testAverageSpeedComesBeforeCadence() throws {
        // A 27-octet value, constructed: bit 1 (average speed) is read before bit 2 (cadence).
        let value = try IndoorBikeData(decoding: Self.allTableFields)
        XCTAssertEqual(value.instantaneousSpeed, 2600)
        XCTAssertEqual(value.averageSpeed, 2500)
        XCTAssertEqual(value.instantaneousCadence, 170)
        XCTAssertEqual(value.averageCadence, 160)
        XCTAssertEqual(value.totalDistance, 8000)
        XCTAssertEqual(value.resistanceLevel, 20)
        XCTAssertEqual(value.instantaneousPower, 180)
        XCTAssertEqual(value.averagePower, 170)
        XCTAssertEqual(value.expendedEnergy, .init(totalEnergy: 200, energyPerHour: 600, energyPerMinute: 10))
        XCTAssertEqual(value.heartRate, 130)
        XCTAssertEqual(value.elapsedTime, 1800)
    }

    static let allTableFields = bytes(
        "FE 0B 28 0A C4 09 AA 00 A0 00 40 1F 00 14 00 B4 00 AA 00 C8 00 58 02 0A 82 08 07")

    func testEveryPrefixFails() {
        assertEveryPrefixFails(
            IndoorBikeData.self, Self.allTableFields,
            layout: [
                ("flags", 2), ("instantaneousSpeed", 2), ("averageSpeed", 2), ("instantaneousCadence", 2),
                ("averageCadence", 2), ("totalDistance", 3), ("resistanceLevel", 2), ("instantaneousPower", 2),
                ("averagePower", 2), ("totalEnergy", 2), ("energyPerHour", 2), ("energyPerMinute", 1),
                ("heartRate", 1), ("elapsedTime", 2),
            ])
    }

    func testEachFlagAlone() throws {
        // Bit 0 set (no speed) plus one other bit at a time, and the field that bit brings.
        let cases: [(flags: String, field: String, check: (IndoorBikeData) -> Bool)] = [
            ("03 00", "C4 09", { $0.averageSpeed == 2500 }),
            ("05 00", "B4 00", { $0.instantaneousCadence == 180 }),
            ("09 00", "A0 00", { $0.averageCadence == 160 }),
            ("11 00", "40 1F 00", { $0.totalDistance == 8000 }),
            ("21 00", "EC FF", { $0.resistanceLevel == -20 }),
            ("41 00", "9C FF", { $0.instantaneousPower == -100 }),
            ("81 00", "AA 00", { $0.averagePower == 170 }),
            (
                "01 01", "FF FF FF FF FF",
                { $0.expendedEnergy == .init(totalEnergy: 0xFFFF, energyPerHour: 0xFFFF, energyPerMinute: 0xFF) }
            ),
            ("01 02", "82", { $0.heartRate == 130 }),
            ("01 04", "2A", { $0.metabolicEquivalent == 42 }),
            ("01 08", "08 07", { $0.elapsedTime == 1800 }),
            ("01 10", "10 0E", { $0.remainingTime == 3600 }),
        ]
        for (flags, field, check) in cases {
            let value = try IndoorBikeData(decoding: bytes(flags + field))
            XCTAssertNil(value.instantaneousSpeed, flags)
            XCTAssertTrue(check(value), "flags \(flags)")
        }
        XCTAssertEqual(
            try IndoorBikeData(decoding: bytes("00 00 83 06")).instantaneousSpeed, 1667, "bit 0 clear: speed")
    }

    func testReservedBitsKept() throws {
        let value = try IndoorBikeData(decoding: bytes("00 E0 83 06"))
        XCTAssertEqual(value.flags.rawValue, 0xE000)
        XCTAssertEqual(value.instantaneousSpeed, 1667)
    }

    func testMatrixNotificationCutAtTwentyBytes() {
        // Flags 0x1DFE promise 29 octets: speed(2) avgSpeed(2) cadence(2) avgCadence(2) distance(3)
        // resistance(2) power(2) avgPower(2) = offsets 2…18, then total energy at 19 needs 2, 1 is left.
        assertMalformed(
            IndoorBikeData.self, bytes("fe1d830c330c86008000c109000d00a2009d0036"), field: "totalEnergy", offset: 19,
            .truncated(needed: 2, available: 1))
    }

    func testLifeFitnessExtraCadenceFieldIsRejected() {
        // Flags 0x09FA need 24 octets (2 + speed 2 + avgSpeed 2 + avgCadence 2 + distance 3 + resistance 2
        // + power 2 + avgPower 2 + energy 5 + elapsed 2); the bike sends 26 because it inserts a cadence
        // field whose bit (2) is clear.
        assertMalformed(
            IndoorBikeData.self, bytes("fa092d09f208740077006500000d00660061000200ffffff1100"), field: "trailingBytes",
            offset: 24, .unexpectedTrailingBytes(count: 2))
    }

    func testAssemblerMergesAStagesSB20Record() throws {
        // Stages SB20 splits a record: distance (More Data), cadence + power (More Data), then speed ends it.
        var assembler = IndoorBikeDataAssembler()
        XCTAssertNil(assembler.add(try IndoorBikeData(decoding: bytes("1100040100"))))
        XCTAssertNil(assembler.add(try IndoorBikeData(decoding: bytes("c500b6005d020000"))))
        let record = try XCTUnwrap(assembler.add(try IndoorBikeData(decoding: bytes("00008306"))))
        XCTAssertEqual(record.totalDistance, 260)
        XCTAssertEqual(record.instantaneousCadence, 182)  // 91 rpm
        XCTAssertEqual(record.instantaneousPower, 605)
        XCTAssertEqual(record.averagePower, 0)
        XCTAssertEqual(record.instantaneousSpeed, 1667)  // 16.67 km/h
        XCTAssertTrue(record.endsRecord)
        XCTAssertNil(assembler.incompleteRecord)
        // A record that fits one notification passes straight through.
        let single = try XCTUnwrap(assembler.add(try IndoorBikeData(decoding: bytes("44 00 54 0B B4 00 C8 00"))))
        XCTAssertEqual(single.instantaneousSpeed, 2900)
        XCTAssertEqual(single.instantaneousCadence, 180)
        XCTAssertEqual(single.instantaneousPower, 200)
    }

    func testRoundTripOverAllFlagCombinations() throws {
        var random = SplitMix64(seed: 0x2AD2)
        for raw in UInt16(0)...0x1FFF {
            let flags = IndoorBikeData.Flags(rawValue: raw)
            var value = IndoorBikeData(flags: flags)
            func u16() -> UInt16 { .random(in: 0 ... .max, using: &random) }
            func s16() -> Int16 { .random(in: .min ... .max, using: &random) }
            func u8() -> UInt8 { .random(in: 0 ... .max, using: &random) }
            if !flags.contains(.moreData) { value.instantaneousSpeed = u16() }
            if flags.contains(.averageSpeedPresent) { value.averageSpeed = u16() }
            if flags.contains(.instantaneousCadencePresent) { value.instantaneousCadence = u16() }
            if flags.contains(.averageCadencePresent) { value.averageCadence = u16() }
            if flags.contains(.totalDistancePresent) {
                value.totalDistance = .random(in: 0...0xFF_FFFF, using: &random)
            }
            if flags.contains(.resistanceLevelPresent) { value.resistanceLevel = s16() }
            if flags.contains(.instantaneousPowerPresent) { value.instantaneousPower = s16() }
            if flags.contains(.averagePowerPresent) { value.averagePower = s16() }
            if flags.contains(.expendedEnergyPresent) {
                value.expendedEnergy = .init(totalEnergy: u16(), energyPerHour: u16(), energyPerMinute: u8())
            }
            if flags.contains(.heartRatePresent) { value.heartRate = u8() }
            if flags.contains(.metabolicEquivalentPresent) { value.metabolicEquivalent = u8() }
            if flags.contains(.elapsedTimePresent) { value.elapsedTime = u16() }
            if flags.contains(.remainingTimePresent) { value.remainingTime = u16() }
            let encoded = value.encoded()
            XCTAssertEqual(Array(encoded.prefix(2)), [UInt8(raw & 0xFF), UInt8(raw >> 8)])
            XCTAssertEqual(try IndoorBikeData(decoding: encoded), value, "flags 0x\(String(raw, radix: 16))")
        }
    }
}
