import Foundation
import TestSupport
import WorkoutStore
import XCTest

/// `cyclelog calibrate` against the stand-in's power meter with a Cycling Power Control Point: the bytes it
/// writes, the indications it reads, what it tells the rider and what it stores (CPS: Cycling Power Control Point).
final class CalibrateCommandTests: XCTestCase {
    /// The stand-in power meter with offset compensation (Cycling Power Feature bit 9) and crank length
    /// adjustment (bit 12) among its features, and a control point set up as given.
    private func powerMeter(_ controlPoint: [String: Any]) -> [String: Any] {
        var power = StandIn.power
        power["reads"] = ["2a65": "08120000", "2a5d": "05"]
        power["controlPoint"] = controlPoint
        return power
    }

    func testZeroOffsetAndCrankLengthAreSentReadBackStoredAndShownWithTheNextRide() async throws {
        let standIn = try StandIn(sensors: [powerMeter(["offset": -10, "crankLength": 340])])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("calibrate.sqlite").path
        try WorkoutStore(path: database).rememberSensors(
            [(address: "C0:11:22:33:44:01", name: "Stages Power L")], at: 1)

        let calibrate = try Cyclelog(
            ["calibrate", "stages power l", "--crank-length", "172.5", "--db", database], standIn: standIn)
        XCTAssertEqual(calibrate.wait(seconds: 60), 0, calibrate.output)
        let output = calibrate.output
        XCTAssertTrue(output.contains("Stages Power L: zero offset done: offset -10 N (raw -10)"), output)
        XCTAssertTrue(output.contains("Stages Power L: crank length set"), output)
        XCTAssertTrue(output.contains("Stages Power L: crank length 172.5 mm"), output)
        // The control point's requests (CPS): Start Offset Compensation, Set Crank Length 345 (1/2 mm), Request Crank Length.
        XCTAssertEqual(try standIn.writes(), [[0x0C], [0x04, 0x59, 0x01], [0x05]])

        let store = try WorkoutStore(path: database)
        let stored = try store.calibrations(of: "C0:11:22:33:44:01")
        XCTAssertEqual(stored.map(\.operation), ["offsetCompensation", "setCrankLength", "requestCrankLength"])
        XCTAssertEqual(stored.map(\.succeeded), [true, true, true])
        XCTAssertEqual(stored.first?.value, -10)
        XCTAssertEqual(stored.first?.unit, "N")
        XCTAssertEqual(stored.first?.response, [0x20, 0x0C, 0x01, 0xF6, 0xFF])
        XCTAssertEqual(stored.last?.response, [0x20, 0x05, 0x01, 0x59, 0x01])
        XCTAssertEqual(try store.knownSensors().first?.crankLengthMillimetres, 172.5)

        let sensors = try Cyclelog(["sensors", "list", "--json", "--db", database], standIn: standIn)
        XCTAssertEqual(sensors.wait(seconds: 20), 0, sensors.output)
        let listed = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(sensors.output.utf8)) as? [String: Any])
        XCTAssertEqual(listed["crankLengthMillimetres"] as? Double, 172.5)
        let last = try XCTUnwrap(listed["lastCalibration"] as? [String: Any])
        XCTAssertEqual(last["operation"] as? String, "requestCrankLength")

        // The next ride shows the calibration with its sensor.
        let record = try Cyclelog(["record", "--plain", "--db", database], standIn: standIn)
        for _ in 0..<100 where !record.output.contains("streaming") {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await rideOn(standIn, record)
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
        XCTAssertTrue(
            record.output.contains("sensor       Stages Power L (C0:11:22:33:44:01)   battery 80 %"), record.output)
        XCTAssertTrue(record.output.contains("calibrated"), record.output)
        XCTAssertTrue(record.output.contains("crank length 172.5 mm"), record.output)
        XCTAssertTrue(record.output.contains("zero offset done: offset -10 N"), record.output)
    }

    func testEveryRefusalIsExplainedAndStoredAsFailed() async throws {
        let cases: [([String: Any], String)] = [
            (["offsetResult": 2], "does not zero over Bluetooth (not supported)"),
            (["offsetResult": 4], "stop pedalling (coast or stand), unclip both feet"),
            (["attError": "fe"], "still busy with an earlier control-point request (ATT error 0xFE)"),
        ]
        for (controlPoint, explanation) in cases {
            let standIn = try StandIn(sensors: [powerMeter(controlPoint)])
            try await standIn.waitUntilReady()
            let database = standIn.bus.folder.appendingPathComponent("refused.sqlite").path
            let calibrate = try Cyclelog(["calibrate", "C0:11:22:33:44:01", "--db", database], standIn: standIn)
            XCTAssertEqual(calibrate.wait(seconds: 60), 1, "\(controlPoint): \(calibrate.output)")
            XCTAssertTrue(calibrate.output.contains(explanation), "\(controlPoint): \(calibrate.output)")
            let stored = try WorkoutStore(path: database).calibrations()
            XCTAssertEqual(stored.map(\.succeeded), [false], "\(controlPoint)")
        }
    }

    func testAMeterWithoutAControlPointIsToldApart() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let calibrate = try Cyclelog(["calibrate", "Stages Power L"], standIn: standIn)
        XCTAssertEqual(calibrate.wait(seconds: 60), 1, calibrate.output)
        XCTAssertTrue(calibrate.output.contains("has no Cycling Power Control Point"), calibrate.output)
    }
}
