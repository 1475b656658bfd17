import Foundation
import RecorderInterface
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// The sensor hub over DirCon (`cyclelog-mirror serve --dircon`): a DirCon app written from the protocol's public
/// description (Tests/DirCon/dircon_client.py, standard library only) against the mirror following a recorder that
/// steers the stand-in's smart trainer, all on a private D-Bus.
final class DirConHubTests: XCTestCase {
    func testAnAppOverDirConReadsTheHubAndSteersTheTrainerThroughTheRecorder() async throws {
        let standIn = try StandIn(sensors: [StandIn.trainer()])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("dircon.sqlite").path
        let record = try Cyclelog(["record", "--plain", "--db", database, "--sensor", "KICKR"], standIn: standIn)
        defer { record.signal(SIGTERM) }
        try await waitFor("the trainer streaming", record) { try standIn.sent().count >= 2 }
        // avahi-daemon is looked for on the private bus, where it is not: the hub says so and serves anyway.
        let (mirror, _) = try await startMirror(
            bus: standIn.bus, listen: "127.0.0.1:0", extra: ["--dircon", "127.0.0.1:0", "--dircon-name", "Pain cave"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": standIn.bus.address])
        defer { mirror.signal(SIGTERM) }
        var dirconPort: Int?
        try await waitFor("the hub served over DirCon", mirror) {
            let line = mirror.output.split(separator: "\n").first { $0.contains("served over DirCon on 127.0.0.1:") }
            dirconPort = line.flatMap { Int($0.split(separator: ":").last?.split(separator: " ").first ?? "") }
            return dirconPort != nil
        }
        try await waitFor("the announcement's failure said", mirror) {
            mirror.output.contains("avahi-daemon did not announce the hub")
        }
        XCTAssertTrue(mirror.output.contains("as \"Pain cave\""), mirror.output)

        let folder = standIn.bus.folder
        let report = folder.appendingPathComponent("dircon.json").path
        let release = folder.appendingPathComponent("dircon.release").path
        let client = try ChildProcess(
            [
                "/usr/bin/env", "python3", StandIn.testsFolder.appendingPathComponent("DirCon/dircon_client.py").path,
                "127.0.0.1", String(try XCTUnwrap(dirconPort)), report, release,
            ], outputPath: folder.appendingPathComponent("dircon.out").path)
        try await waitFor("the app's report", mirror, seconds: 40) { FileManager.default.fileExists(atPath: report) }
        let found = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        let app = try XCTUnwrap(found["app"] as? String)

        // The four services, the Fitness Machine's characteristics with DirCon's properties (read 01, write 02,
        // notify 04; the control point's indication is DirCon's notification), and what the trainer declares: the
        // stand-in's power and resistance targets (FTMS 4.3: bits 2 and 3), its 0–1500 W.
        XCTAssertEqual(found["services"] as? [String], ["1818", "1816", "180d", "1826"])
        let machine = try XCTUnwrap((found["characteristics"] as? [String: [String: Int]])?["1826"])
        XCTAssertEqual(machine, ["2acc": 1, "2ad2": 4, "2ad9": 6, "2ada": 4, "2ad8": 1, "2ad6": 1])
        let reads = try XCTUnwrap(found["reads"] as? [String: String])
        XCTAssertEqual(reads["2a65"], "08000000", "Cycling Power Feature: crank revolution data (CPS 3.2, bit 3)")
        XCTAssertEqual(reads["2ad8"], "0000dc050100", "the trainer's 0–1500 W in steps of 1 W")
        XCTAssertEqual(reads["2ad6"], "0000ff000100")
        XCTAssertEqual(
            found["enabled"] as? [String: Int], ["2a63": 0, "2a5b": 0, "2ad2": 0, "2a55": 0, "2ad9": 0])
        XCTAssertEqual(found["setCumulativeValue"] as? Int, 0, "the write taken")
        // Request Control answered by the hub, Set Target Power 200 W once the trainer answered (80 05 01).
        XCTAssertEqual((found["requestControl"] as? [Any])?.last as? String, "800001", "\(found)")
        XCTAssertEqual((found["setTargetPower"] as? [Any])?.last as? String, "800501", "\(found)")
        XCTAssertEqual(found["unknownType"] as? Int, 1, "Unknown Message Type")
        XCTAssertEqual(found["readControlPoint"] as? Int, 5, "Characteristic Operation Not Supported")
        try await waitFor("200 W written to the trainer", record) { try standIn.writes().contains([0x05, 0xC8, 0x00]) }

        // The powers the app was sent are the trainer's own, in order (Cycling Power Measurement bytes 2–3, Indoor
        // Bike Data's power after its flags and speed).
        let notifications = try XCTUnwrap(found["notifications"] as? [[Any]])
        let powers = notifications.compactMap { entry -> Int? in
            guard entry.count == 3, entry[1] as? Int == 0x2A63, let hex = entry[2] as? String else { return nil }
            let bytes = Array(hex.utf8)
            guard bytes.count >= 8,
                let value = UInt16(String(decoding: bytes[6..<8] + bytes[4..<6], as: UTF8.self), radix: 16)
            else { return nil }
            return Int(Int16(bitPattern: value))
        }
        XCTAssertGreaterThan(powers.count, 8, "\(notifications.prefix(5))")
        let sent = try standIn.sent().filter { $0.characteristic == "2ad2" && $0.value.count >= 8 }.map { entry in
            // Indoor Bike Data from the stand-in: flags 0x0044 (speed, cadence, power), speed, cadence, power.
            Int(Int16(bitPattern: UInt16(entry.value[6]) | UInt16(entry.value[7]) << 8))
        }
        var next = sent.startIndex
        for power in powers {
            let index = try XCTUnwrap(sent[next...].firstIndex(of: power), "\(power) W was not sent: \(sent)")
            next = index + 1
        }

        // While the app steers: the status names it, over DirCon.
        let status = try Cyclelog(["status", "--json"], standIn: standIn)
        XCTAssertEqual(status.wait(seconds: 20), 0, status.output)
        let steering = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any], status.output)
        XCTAssertEqual(steering["TrainerHolder"] as? String, app)
        XCTAssertEqual(steering["HubApps"] as? String, "\(app) over DirCon")

        // The app leaves: the trainer is let go (Reset), the journal holds both directions and the holder.
        FileManager.default.createFile(atPath: release, contents: Data())
        XCTAssertEqual(client.wait(seconds: 20), 0)
        try await waitFor("the trainer let go", record) { try standIn.writes().last == [0x01] }
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)
        let store = try WorkoutStore(path: database)
        let journal = try store.journal(try XCTUnwrap(store.list().first?.id))
        let hub = journal.compactMap { event -> String? in
            switch event.kind {
            case .hub(.written(let writer, let characteristic, let value)):
                "write \(writer) \(String(format: "%04x", characteristic)) \(value.map { String(format: "%02x", $0) }.joined())"
            case .hub(.holder(let holder, _)): "holder \(holder ?? "rider")"
            default: nil
            }
        }
        XCTAssertEqual(
            hub,
            [
                "write \(app) 2a55 0140420f00", "write \(app) 2ad9 00", "holder \(app)", "write \(app) 2ad9 05c800",
                "holder rider",
            ])
        // What the app received over DirCon, from the middle of the ride on, is the journal's replay byte for byte
        // (the recorder makes what every hub sends from its first reading): the measurements, and the SC Control
        // Point's answer (CSCS 1.0 §3.4: 10, the op code, Success) with the wheel counting on from 1 000 000.
        let (replayed, _) = try hubReplay(database)
        var received: [String: [String]] = [:]
        for entry in notifications where entry.count == 3 {
            guard let uuid = entry[1] as? Int, let hex = entry[2] as? String else { continue }
            received[String(format: "%04x", uuid), default: []].append(hex)
        }
        XCTAssertEqual(received["2a55"], ["100101"])
        XCTAssertEqual(replayed["2a55"], ["100101"])
        for uuid in ["2a63", "2a5b", "2ad2"] {
            assertReplayed(received[uuid, default: []], in: replayed[uuid, default: []], uuid)
        }
        let wheels = received["2a5b", default: []].compactMap(cumulativeWheelRevolutions)
        XCTAssertTrue(wheels.contains { $0 >= 1_000_000 }, "wheel revolutions heard: \(wheels.suffix(5))")
        XCTAssertTrue(mirror.output.contains("an app connected to the hub over DirCon: \(app)"), mirror.output)
        XCTAssertTrue(mirror.output.contains("\(app) left the hub (DirCon)"), mirror.output)
    }
}
