import Foundation
import XCTest

/// `cyclelog sensors`: the remembered sensors, as a rider manages them.
final class SensorsCommandTests: XCTestCase {
    func testAddRenameSetAndForget() throws {
        let database = NSTemporaryDirectory() + "cyclelog-sensors-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: database) }
        let empty = try cyclelog(["sensors", "--db", database])
        XCTAssertEqual(empty.status, 0)
        XCTAssertTrue(empty.output.contains("No sensor is remembered yet"), empty.output)

        XCTAssertEqual(
            try cyclelog(["sensors", "add", "c0:11:22:33:44:01", "--name", "Stages", "--db", database]).status, 0)
        XCTAssertEqual(try cyclelog(["sensors", "add", "D4:22:33:44:55:66", "--db", database]).status, 0)
        let rename = try cyclelog(["sensors", "rename", "stages", "Left crank", "--db", database])
        XCTAssertEqual(rename.output, "C0:11:22:33:44:01 is now called Left crank.\n")
        let wheel = try cyclelog(["sensors", "set", "D4:22:33:44:55:66", "--wheel", "700x25c", "--db", database])
        XCTAssertEqual(wheel.status, 0, wheel.errorOutput)
        XCTAssertTrue(wheel.output.contains("wheel 2111 mm"), wheel.output)
        let crank = try cyclelog(["sensors", "set", "Left crank", "--crank-length", "172.5", "--db", database])
        XCTAssertTrue(crank.output.contains("crank 172.5 mm"), crank.output)

        let listed = try cyclelog(["sensors", "list", "--json", "--db", database]).lines.map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(listed.compactMap { $0["address"] as? String }, ["C0:11:22:33:44:01", "D4:22:33:44:55:66"])
        XCTAssertEqual(listed.first?["name"] as? String, "Left crank")
        XCTAssertEqual(listed.first?["crankLengthMillimetres"] as? Double, 172.5)
        XCTAssertEqual(listed.last?["wheelCircumferenceMillimetres"] as? Int, 2111)
        XCTAssertTrue(listed.last?["lastCalibration"] is NSNull)

        let forget = try cyclelog(["sensors", "forget", "left crank", "--db", database])
        XCTAssertEqual(forget.output, "Forgot Left crank (C0:11:22:33:44:01).\n")
        XCTAssertEqual(try cyclelog(["sensors", "list", "--json", "--db", database]).lines.count, 1)
    }

    func testMistakesAreExplained() throws {
        let database = NSTemporaryDirectory() + "cyclelog-sensors-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: database) }
        let unknown = try cyclelog(["sensors", "forget", "Nobody", "--db", database])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.errorOutput.contains("no remembered sensor is called Nobody (none is remembered yet)"))
        let badAddress = try cyclelog(["sensors", "add", "C0:11:22", "--db", database])
        XCTAssertEqual(badAddress.status, 64)
        XCTAssertTrue(badAddress.errorOutput.contains("is not a Bluetooth address"), badAddress.errorOutput)
        XCTAssertEqual(try cyclelog(["sensors", "add", "C0:11:22:33:44:01", "--db", database]).status, 0)
        let badWheel = try cyclelog(["sensors", "set", "C0:11:22:33:44:01", "--wheel", "650x23", "--db", database])
        XCTAssertEqual(badWheel.status, 64)
        XCTAssertTrue(badWheel.errorOutput.contains("tyre size such as 700x25c"), badWheel.errorOutput)
        let badCrank = try cyclelog([
            "sensors", "set", "C0:11:22:33:44:01", "--crank-length", "172.3", "--db", database,
        ])
        XCTAssertEqual(badCrank.status, 64)
    }
}
