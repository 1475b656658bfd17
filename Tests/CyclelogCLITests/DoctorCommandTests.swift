import Foundation
import LiveRecording
import SensorSetup
import TestSupport
import WorkoutStore
import XCTest

/// `cyclelog doctor` as a rider or a script runs it: against the BlueZ stand-in on a private bus, a sysfs tree
/// made by the test (`$CYCLELOG_SYSFS`), and real database files.
final class DoctorCommandTests: XCTestCase {
    /// A sysfs tree with the given controllers and, for some, an rfkill switch (soft, hard).
    func sysfs(_ controllers: [String: (soft: Bool, hard: Bool)?], in folder: URL) throws -> String {
        let root = folder.appendingPathComponent("sys")
        let files = FileManager.default
        for (index, (name, rfkill)) in controllers.sorted(by: { $0.key < $1.key }).enumerated() {
            try files.createDirectory(
                at: root.appendingPathComponent("class/bluetooth/\(name)"), withIntermediateDirectories: true)
            guard let rfkill else { continue }
            let switchFolder = root.appendingPathComponent("class/rfkill/rfkill\(index)")
            try files.createDirectory(at: switchFolder, withIntermediateDirectories: true)
            for (file, text) in [
                ("type", "bluetooth"), ("name", name), ("soft", rfkill.soft ? "1" : "0"),
                ("hard", rfkill.hard ? "1" : "0"),
            ] {
                try (text + "\n").write(
                    to: switchFolder.appendingPathComponent(file), atomically: true, encoding: .utf8)
            }
        }
        // A wireless LAN switch, blocked, which is not Bluetooth's business.
        let wlan = root.appendingPathComponent("class/rfkill/rfkill9")
        try files.createDirectory(at: wlan, withIntermediateDirectories: true)
        for (file, text) in [("type", "wlan"), ("name", "phy0"), ("soft", "1"), ("hard", "0")] {
            try (text + "\n").write(to: wlan.appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
        return root.path
    }

    /// Runs `cyclelog doctor --json` and returns its exit status and checks by name (sensors in order).
    func doctor(bus: PrivateBus, sysfs: String, database: String) throws -> (
        status: Int32?, checks: [(name: String, status: String, detail: String, fix: String?)]
    ) {
        let output = bus.folder.appendingPathComponent("doctor-\(UUID().uuidString).json").path
        let process = try ChildProcess(
            [try cyclelogBinary().path, "doctor", "--json", "--timeout", "1", "--db", database],
            environment: ["CYCLELOG_DBUS_ADDRESS": bus.address, "CYCLELOG_SYSFS": sysfs], outputPath: output)
        let status = process.wait(seconds: 60)
        let text = try String(contentsOfFile: output, encoding: .utf8)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        let checks = try XCTUnwrap(object["checks"] as? [[String: Any]], text).map {
            (
                name: $0["name"] as? String ?? "", status: $0["status"] as? String ?? "",
                detail: $0["detail"] as? String ?? "", fix: $0["fix"] as? String
            )
        }
        XCTAssertEqual(object["healthy"] as? Bool, status == 0, "healthy agrees with the exit status")
        return (status, checks)
    }

    /// The kernel's facts about the controllers (HCI ioctls, no privilege) name exactly the controllers this
    /// machine's real /sys shows; on a machine without any (as CI's), none, and the radio check says so.
    func testTheAdaptersFactsAreTheKernelsControllers() throws {
        let folder = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
        let output = folder.appendingPathComponent("doctor.json").path
        let process = try ChildProcess(
            [
                try cyclelogBinary().path, "doctor", "--json", "--timeout", "1", "--db",
                folder.appendingPathComponent("rides.sqlite").path,
            ], environment: ["CYCLELOG_DBUS_ADDRESS": "unix:path=/nonexistent"], outputPath: output)
        _ = process.wait(seconds: 60)
        let text = try String(contentsOfFile: output, encoding: .utf8)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        XCTAssertTrue(object["adaptersUnavailable"] is NSNull, text)
        let adapters = try XCTUnwrap(object["adapters"] as? [[String: Any]], text)
        let controllers = ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? [])
            .filter { $0.hasPrefix("hci") && !$0.contains(":") }
        XCTAssertEqual(Set(adapters.compactMap { $0["name"] as? String }), Set(controllers), text)
        if controllers.isEmpty {
            print(
                "DoctorCommandTests: this machine has no Bluetooth controller; make test-vm checks the facts of real ones"
            )
            let radio = try XCTUnwrap(
                (object["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "radio" }, text)
            XCTAssertEqual(radio["detail"] as? String, "the kernel shows no Bluetooth controller")
        }
    }

    func testAWorkingSetupPassesAndAnAsleepSensorIsOnlyAWarning() async throws {
        let standIn = try StandIn(sensors: [StandIn.power, StandIn.cadence])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("ride.sqlite").path
        let store = try WorkoutStore(path: database)
        try store.rememberSensors([("C0:11:22:33:44:01", "Stages Power L")], at: 2_000_000)
        try store.rememberSensors([("C0:11:22:33:44:02", "Wahoo CADENCE")], at: 1_500_000)
        try store.rememberSensors([("C0:11:22:33:44:09", "Garmin HRM")], at: 1_000_000)
        let tree = try sysfs(["hci0": (soft: false, hard: false)], in: standIn.bus.folder)

        let (status, checks) = try doctor(bus: standIn.bus, sysfs: tree, database: database)
        XCTAssertEqual(status, 0, "\(checks)")
        let byName = Dictionary(grouping: checks, by: \.name)
        for name in ["radio", "bluetoothd", "access", "adapter", "database"] {
            XCTAssertEqual(byName[name]?.map(\.status), ["ok"], name)
        }
        XCTAssertEqual(byName["radio"]?.first?.detail, "hci0, not blocked")
        // The stand-in's adapter (StandIn.swift) and its power meter's battery; the strap is not there.
        XCTAssertEqual(byName["adapter"]?.first?.detail, "hci0 (00:AA:01:00:00:00) is on")
        let sensors = try XCTUnwrap(byName["sensor"])
        XCTAssertEqual(sensors.map(\.status), ["ok", "warning", "warning"])
        XCTAssertEqual(sensors[0].detail, "Stages Power L (C0:11:22:33:44:01) is in range, battery 80 %")
        // The cadence sensor's 12 % is a warning: it works, but not for long.
        XCTAssertEqual(sensors[1].detail, "Wahoo CADENCE (C0:11:22:33:44:02) is in range, battery 12 %")
        XCTAssertEqual(sensors[1].fix, "charge it or replace its battery before the next ride")
        XCTAssertTrue(sensors[2].detail.hasPrefix("Garmin HRM (C0:11:22:33:44:09) was not heard"), sensors[2].detail)
        XCTAssertTrue(sensors[2].fix?.contains("wake it") == true)
    }

    func testEachProblemIsNamedWithItsFixAndFailsTheExitStatus() async throws {
        let bus = try PrivateBus()  // no bluetoothd on it
        let damaged = bus.folder.appendingPathComponent("damaged.sqlite").path
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: damaged))
        let tree = try sysfs(["hci0": (soft: true, hard: false), "hci1": nil], in: bus.folder)

        let (status, checks) = try doctor(bus: bus, sysfs: tree, database: damaged)
        XCTAssertEqual(status, 1)
        let byName = Dictionary(grouping: checks, by: \.name)
        XCTAssertEqual(byName["radio"]?.first?.status, "problem")
        XCTAssertEqual(byName["radio"]?.first?.detail, "hci0 is blocked (rfkill soft block, airplane mode)")
        XCTAssertEqual(byName["radio"]?.first?.fix, "`rfkill unblock bluetooth`")
        XCTAssertEqual(byName["bluetoothd"]?.first?.status, "problem")
        XCTAssertEqual(byName["bluetoothd"]?.first?.detail, "nobody owns org.bluez on the bus")
        XCTAssertTrue(byName["bluetoothd"]?.first?.fix?.contains("systemctl enable --now bluetooth") == true)
        XCTAssertNil(byName["adapter"], "no adapter check without bluetoothd")
        XCTAssertEqual(byName["database"]?.first?.status, "problem")
        XCTAssertNotNil(byName["database"]?.first?.fix)
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: damaged)), Data(repeating: 0x5A, count: 8192),
            "the damaged file is left as it was")
    }

    func testAccessDeniedNamesThePolicyAndTheGroup() async throws {
        let bus = try PrivateBus(denySendingTo: ["org.bluez"])
        let standIn = try StandIn(sensors: [StandIn.power], bus: bus)
        try await standIn.waitUntilReady()
        let tree = try sysfs(["hci0": nil], in: bus.folder)
        let (status, checks) = try doctor(
            bus: bus, sysfs: tree, database: bus.folder.appendingPathComponent("new/ride.sqlite").path)
        XCTAssertEqual(status, 1)
        let access = try XCTUnwrap(checks.first { $0.name == "access" })
        XCTAssertEqual(access.status, "problem")
        XCTAssertTrue(access.fix?.contains("usermod -aG bluetooth") == true, access.fix ?? "")
        let database = try XCTUnwrap(checks.first { $0.name == "database" })
        XCTAssertEqual(database.status, "ok")
        XCTAssertTrue(database.detail.hasSuffix("will be made on the first ride"), database.detail)
    }

    func testRadiosComeFromSysfsWithTheirOwnSwitchesOnly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("radios-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tree = try sysfs(
            ["hci0": (soft: false, hard: true), "hci1": nil, "hci10": (soft: true, hard: false)], in: folder)
        XCTAssertEqual(
            BluetoothRadio.all(sysfs: tree),
            [
                BluetoothRadio(name: "hci0", hardBlocked: true), BluetoothRadio(name: "hci1"),
                BluetoothRadio(name: "hci10", softBlocked: true),
            ])
        XCTAssertEqual(BluetoothRadio.all(sysfs: folder.appendingPathComponent("nothing").path), [])
    }
}
