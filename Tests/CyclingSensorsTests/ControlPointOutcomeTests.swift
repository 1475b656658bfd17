import CyclingSensors
import XCTest

/// What `cyclelog calibrate` tells the rider, from the control-point answers the Cycling Power Service defines.
final class ControlPointOutcomeTests: XCTestCase {
    private func outcome(_ bytes: [UInt8], torqueBased: Bool = false) throws -> ControlPointOutcome {
        CyclingPowerControlPoint.outcome(
            of: try CyclingPowerControlPoint(decoding: bytes).message, torqueBased: torqueBased)
    }

    func testOffsetIsInNewtonsOrThirtySecondsOfANewtonMetre() throws {
        // `20 0C 01 F6 FF`: offset compensation done, raw offset −10 (sint16 little-endian).
        let force = try outcome([0x20, 0x0C, 0x01, 0xF6, 0xFF])
        XCTAssertTrue(force.succeeded)
        XCTAssertEqual(force.value, -10)
        XCTAssertEqual(force.unit, "N")
        XCTAssertTrue(force.explanation.hasPrefix("zero offset done: offset -10 N (raw -10)"))
        // Torque-based meters (feature bit 16) count 1/32 N·m: −10/32 = −0.3125.
        let torque = try outcome([0x20, 0x0C, 0x01, 0xF6, 0xFF], torqueBased: true)
        XCTAssertEqual(torque.value, -0.3125)
        XCTAssertEqual(torque.unit, "N·m")
        // The enhanced form answers the same way.
        XCTAssertEqual(try outcome([0x20, 0x10, 0x01, 0x20, 0x00]).value, 32)
    }

    func testCrankLengthIsInHalfMillimetres() throws {
        // `20 05 01 59 01`: 0x0159 = 345 half millimetres = 172.5 mm.
        let read = try outcome([0x20, 0x05, 0x01, 0x59, 0x01])
        XCTAssertEqual(read.value, 172.5)
        XCTAssertEqual(read.explanation, "crank length 172.5 mm")
        XCTAssertEqual(try outcome([0x20, 0x04, 0x01]).explanation, "crank length set")
        XCTAssertEqual(CyclingPowerControlPoint.setCrankLength(halfMillimetres: 345), [0x04, 0x59, 0x01])
    }

    func testRefusalsSayWhatToDo() throws {
        XCTAssertTrue(try outcome([0x20, 0x0C, 0x02]).explanation.contains("does not zero over Bluetooth"))
        let failed = try outcome([0x20, 0x0C, 0x04])
        XCTAssertFalse(failed.succeeded)
        XCTAssertTrue(failed.explanation.contains("stop pedalling (coast or stand), unclip both feet"))
        XCTAssertTrue(try outcome([0x20, 0x10, 0x04, 0x01]).explanation.contains("not in the calibration position"))
        XCTAssertTrue(
            try outcome([0x20, 0x10, 0x04, 0xFF, 0x12, 0x34]).explanation.contains("maker's own error (12 34)"))
        XCTAssertTrue(try outcome([0x20, 0x04, 0x03]).explanation.contains("refused that crank length"))
        XCTAssertTrue(try outcome([0x20, 0x05, 0x02]).explanation.contains("cannot be set or read over Bluetooth"))
        // `20 0F 02`: Request Factory Calibration Date → Op Code Not Supported.
        XCTAssertEqual(
            try outcome([0x20, 0x0F, 0x02]).explanation,
            "the meter answered Op Code Not Supported to Request Factory Calibration Date")
    }

    func testATTErrorsOfTheControlPoint() {
        XCTAssertTrue(
            CyclingPowerControlPoint.explainATTError(0xFD).contains("indications on its control point are off"))
        XCTAssertTrue(CyclingPowerControlPoint.explainATTError(0xFE).contains("still busy"))
        XCTAssertTrue(CyclingPowerControlPoint.explainATTError(0x80).contains("connection parameters"))
        XCTAssertEqual(
            CyclingPowerControlPoint.explainATTError(0x81), "the meter refused the request (ATT error 0x81)")
    }
}
