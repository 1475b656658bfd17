import CyclingSensors
import TestSupport
import XCTest

final class CSCMeasurementTests: XCTestCase {
    func testSpecExamples() throws {
        // pycycling's test vector: wheel 0xFFFFFFFF @ 0x3F03, crank 0x07FF @ 0x0FE7.
        let both = try CSCMeasurement(decoding: bytes("03 FF FF FF FF 03 3F FF 07 E7 0F"))
        XCTAssertEqual(
            both.wheelRevolutionData, .init(cumulativeWheelRevolutions: 4_294_967_295, lastWheelEventTime: 16131))
        XCTAssertEqual(both.crankRevolutionData, .init(cumulativeCrankRevolutions: 2047, lastCrankEventTime: 4071))
        // OpenTracks: 0x0100FFFF = 16 842 751 revolutions, 0x9945 = 39237.
        let wheel = try CSCMeasurement(decoding: bytes("01 FF FF 00 01 45 99"))
        XCTAssertEqual(
            wheel.wheelRevolutionData, .init(cumulativeWheelRevolutions: 16_842_751, lastWheelEventTime: 39237))
        XCTAssertNil(wheel.crankRevolutionData)
        let crank = try CSCMeasurement(decoding: bytes("02 2A 00 00 40"))
        XCTAssertNil(crank.wheelRevolutionData, "bit 1 is crank, not wheel")
        XCTAssertEqual(crank.crankRevolutionData, .init(cumulativeCrankRevolutions: 42, lastCrankEventTime: 16384))
        XCTAssertEqual(CSCMeasurement.wheelTicksPerSecond, 1024)
    }

    func testFlagsZeroIsLegalButEmpty() throws {
        let value = try CSCMeasurement(decoding: [0x00])
        XCTAssertNil(value.wheelRevolutionData)
        XCTAssertNil(value.crankRevolutionData)
    }

    func testOpenTracksVectorWithTwoTrailingBytes() throws {
        // OpenTracks' test vector: crank 200 @ 0, then 06 99 beyond the flagged fields — tolerated and counted.
        let value = try CSCMeasurement(decoding: bytes("02 C8 00 00 00 06 99"))
        XCTAssertEqual(value.crankRevolutionData, .init(cumulativeCrankRevolutions: 200, lastCrankEventTime: 0))
        XCTAssertEqual(value.trailingByteCount, 2)
    }

    func testReservedBitsKept() throws {
        let value = try CSCMeasurement(decoding: bytes("FE 2A 00 00 40"))
        XCTAssertEqual(value.flags.rawValue, 0xFE)
        XCTAssertEqual(value.crankRevolutionData?.cumulativeCrankRevolutions, 42)
        XCTAssertNil(value.wheelRevolutionData)
    }

    func testEveryPrefixFails() {
        assertEveryPrefixFails(
            CSCMeasurement.self, bytes("03 C8 00 00 01 06 99 E1 00 45 99"),
            layout: [
                ("flags", 1), ("cumulativeWheelRevolutions", 4), ("lastWheelEventTime", 2),
                ("cumulativeCrankRevolutions", 2), ("lastCrankEventTime", 2),
            ])
    }

    func testRoundTripOverAllFlagValues() throws {
        var random = SplitMix64(seed: 0x2A5B)
        for raw in UInt8(0)...0xFF {
            let flags = CSCMeasurement.Flags(rawValue: raw)
            var value = CSCMeasurement(flags: flags)
            if flags.contains(.wheelRevolutionDataPresent) {
                value.wheelRevolutionData = .random(using: &random)
            }
            if flags.contains(.crankRevolutionDataPresent) {
                value.crankRevolutionData = .random(using: &random)
            }
            value.flags = flags  // as a decoder would see them
            XCTAssertEqual(value.encoded().first, raw)
            XCTAssertEqual(try CSCMeasurement(decoding: value.encoded()), value)
        }
    }
}

final class HeartRateMeasurementTests: XCTestCase {
    typealias HRM = HeartRateMeasurement

    func testSpecExamples() throws {
        let plain = try HRM(decoding: bytes("00 2A"))  // pycycling: 42 bpm, contact not supported
        XCTAssertEqual(plain.heartRate, 42)
        XCTAssertEqual(plain.sensorContact, .notSupported)
        XCTAssertEqual(try HRM(decoding: bytes("01 01 01")).heartRate, 257, "uint16 heart rate 0x0101")
        // 0x02: bit 1 alone means nothing without bit 2.
        XCTAssertEqual(try HRM(decoding: bytes("02 3C")).sensorContact, .notSupported)
        let rr = try HRM(decoding: bytes("16 48 40 03 60 03"))
        XCTAssertEqual(rr.heartRate, 72)
        XCTAssertEqual(rr.sensorContact, .detected)
        XCTAssertEqual(rr.rrIntervals, [832, 864])  // 812.5 ms and 843.75 ms at 1/1024 s
        let energy = try HRM(decoding: bytes("0F 96 00 23 01"))
        XCTAssertEqual(energy.heartRate, 150)
        XCTAssertEqual(energy.energyExpended, 291)
        XCTAssertEqual(energy.sensorContact, .detected)
        XCTAssertEqual(try HRM(decoding: bytes("04 50")).sensorContact, .notDetected, "supported, not detected")
    }

    func testEachFlagAlone() throws {
        XCTAssertEqual(try HRM(decoding: bytes("01 2C 01")).heartRate, 300)
        XCTAssertEqual(try HRM(decoding: bytes("02 50")).sensorContact, .notSupported)
        XCTAssertEqual(try HRM(decoding: bytes("04 50")).sensorContact, .notDetected)
        XCTAssertEqual(try HRM(decoding: bytes("08 50 10 00")).energyExpended, 16)
        XCTAssertEqual(try HRM(decoding: bytes("10 50 00 04")).rrIntervals, [1024])
        XCTAssertEqual(try HRM(decoding: bytes("10 50")).rrIntervals, [], "RR flag with no room left is an empty list")
    }

    func testOddRRByteIsATruncatedInterval() {
        assertMalformed(
            HRM.self, bytes("10 50 00 04 01"), field: "rrIntervals", offset: 4, .truncated(needed: 2, available: 1))
    }

    func testEveryPrefixFails() {
        assertEveryPrefixFails(
            HRM.self, bytes("09 96 00 23 01"), layout: [("flags", 1), ("heartRate", 2), ("energyExpended", 2)])
    }

    func testReservedBitsAndTrailingBytes() throws {
        let value = try HRM(decoding: bytes("E0 50 FF"))
        XCTAssertEqual(value.flags.rawValue, 0xE0)
        XCTAssertEqual(value.heartRate, 80)
        XCTAssertEqual(value.trailingByteCount, 1)
    }

    func testRoundTripOverAllFlagValues() throws {
        var random = SplitMix64(seed: 0x2A37)
        for raw in UInt8(0)...0xFF {
            let flags = HRM.Flags(rawValue: raw)
            let heartRate: UInt16 =
                flags.contains(.heartRateIsUInt16)
                ? .random(in: 0 ... .max, using: &random) : .random(in: 0...255, using: &random)
            var value = HRM(flags: flags, heartRate: heartRate)
            if flags.contains(.energyExpendedPresent) { value.energyExpended = .random(in: 0 ... .max, using: &random) }
            if flags.contains(.rrIntervalsPresent) {
                value.rrIntervals = (0..<Int.random(in: 0...9, using: &random)).map { _ in
                    .random(in: 0 ... .max, using: &random)
                }
            }
            value.flags = flags  // as a decoder would see them
            XCTAssertEqual(value.encoded().first, raw)
            XCTAssertEqual(try HRM(decoding: value.encoded()), value, "flags 0x\(String(raw, radix: 16))")
        }
    }
}
