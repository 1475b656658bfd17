import Foundation
import TestSupport
import XCTest

/// `make demo-live` (scripts/demo-live.sh): a live ride on this machine without Bluetooth hardware, labelled as a
/// demonstration, in a database of its own.
final class DemoLiveTests: XCTestCase {
    func testTheSensorFreeDemoRecordsALiveRideAndOffersAPairingLink() throws {
        let home = try Self.home()
        defer { try? FileManager.default.removeItem(at: home) }
        let text = try Self.demo(home: home)

        XCTAssertTrue(text.contains("DEMONSTRATION - no Bluetooth hardware"), text)
        // A pairing link to the mirror, and what a phone needs to reach it.
        XCTAssertNotNil(
            text.range(of: #"http://127\.0\.0\.1:[0-9]+/pair\?t=[A-Za-z0-9_-]+"#, options: .regularExpression), text)
        XCTAssertTrue(text.contains("a phone cannot open this link"), text)
        // The advice names the demo's own setting, and how to pair again while it runs.
        XCTAssertTrue(text.contains("`DEMO_LISTEN=0.0.0.0:8787 make demo-live`"), text)
        XCTAssertFalse(text.contains("`cyclelog-mirror --listen"), text)
        XCTAssertTrue(text.contains("cyclelog-mirror pair --control-bus"), text)
        // The recorder found the three stand-in sensors, recorded and saved the ride with power, cadence, speed and
        // heart rate from the capture.
        XCTAssertTrue(text.contains("Workout 1 — ended"), text)
        for name in ["Demo power meter", "Demo speed sensor", "Demo heart-rate strap"] {
            XCTAssertTrue(text.contains("sensor       \(name)"), "\(name): \(text)")
        }
        let power = try XCTUnwrap(
            text.split(separator: "\n").first { $0.hasPrefix("  power        avg ") }, text)
        let watts = try XCTUnwrap(Int(power.split(separator: " ")[2]), String(power))
        // Twenty minutes into the real ride the rider is pedalling: the replayed power is a rider's, not 0 W.
        XCTAssertGreaterThan(watts, 50, String(power))
        XCTAssertTrue(text.contains("heart rate   avg "), text)
        // Nothing of the rider's was touched, and the demo's folder is gone.
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.appendingPathComponent("mine.sqlite").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home.path), [])
        let folder = try XCTUnwrap(
            text.range(of: #"/[^ ]*cyclelog-demo\.[A-Za-z0-9]+"#, options: .regularExpression).map { String(text[$0]) })
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder), folder)
    }

    /// `DEMO_TRAINER=1`: the trainer is steered in ERG while the meter replays a recorded ride, which does not
    /// follow the trainer's targets; the banner and the ride's name say so, so that "ERG within … W" is not taken
    /// for a rider's.
    func testTheDemoWithATrainerSaysItsPowerIsAReplay() throws {
        let home = try Self.home()
        defer { try? FileManager.default.removeItem(at: home) }
        let text = try Self.demo(home: home, ["DEMO_TRAINER": "1"])
        XCTAssertTrue(
            text.contains("The power meter replays a recorded ride: it does not follow the trainer's targets"), text)
        XCTAssertTrue(
            text.contains("Workout 1 \"Demo replay: its power meter does not follow the trainer\" — ended"), text)
        for name in ["Demo power meter", "Demo smart trainer"] {
            XCTAssertTrue(text.contains("sensor       \(name)"), "\(name): \(text)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home.path), [])
    }

    /// A home of the rider's own for one run: the demo must leave it as it was.
    private static func home() throws -> URL {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-demo-home-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        return home
    }

    /// Runs `scripts/demo-live.sh` for 12 seconds of riding, its mirror on a port of its own, and returns what it
    /// printed once it exited with status 0.
    private static func demo(home: URL, _ extra: [String: String] = [:]) throws -> String {
        let repository = fixturesFolder.deletingLastPathComponent()
        let process = Process()
        process.executableURL = repository.appendingPathComponent("scripts/demo-live.sh")
        var environment = ProcessInfo.processInfo.environment
        // The rider's own places: the demo must leave them alone.
        environment["CYCLELOG_DB"] = home.appendingPathComponent("mine.sqlite").path
        environment["HOME"] = home.path
        environment["XDG_STATE_HOME"] = home.appendingPathComponent("state").path
        environment["DEMO_SECONDS"] = "12"
        environment["DEMO_LISTEN"] = "127.0.0.1:0"
        environment.merge(extra) { $1 }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, text)
        return text
    }
}
