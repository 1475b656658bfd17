import BlueZ
import DBus
import Foundation
import XCTest

@testable import SensorSetup

/// `doctor`'s checks with the machine replaced through its probes: a sysfs tree, programs and files the test
/// decides, no bus. What each finding says and advises, without root and without systemd.
final class SetupDoctorTests: XCTestCase {
    /// Probes for a machine with one soft-blocked controller, no bluetoothd, a database folder that exists, and
    /// the service unit installed or not, `systemctl is-active` answering `activeStatus`.
    func probes(unitInstalled: Bool, activeStatus: Int32?) throws -> SetupDoctor.Probes {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-\(UUID().uuidString)")
        let rfkill = folder.appendingPathComponent("sys/class/rfkill/rfkill0")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("sys/class/bluetooth/hci0"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: rfkill, withIntermediateDirectories: true)
        for (file, text) in [("type", "bluetooth"), ("name", "hci0"), ("soft", "1"), ("hard", "0")] {
            try (text + "\n").write(to: rfkill.appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
        return SetupDoctor.Probes(
            sysfs: folder.appendingPathComponent("sys").path,
            connectBlueZ: { () throws(BlueZError) in
                throw BlueZError(
                    DBusError(name: DBusError.serviceUnknownName, message: "no owner"), while: "connecting")
            },
            bluezBus: "system", adapterName: nil, sensorSearch: .seconds(1),
            databasePath: folder.appendingPathComponent("rides.sqlite").path,
            run: { path, arguments in
                guard path == "/usr/bin/systemctl", arguments.contains("is-active") else { return nil }
                return activeStatus.map { ($0, "") }
            },
            fileExists: { path in unitInstalled && path.hasSuffix("/cyclelog.service") })
    }

    func testEachFindingSaysWhatToDo() async throws {
        let checks = await SetupDoctor(probes: try probes(unitInstalled: false, activeStatus: nil)).checks()
        XCTAssertEqual(checks.map(\.name), ["radio", "bluetoothd", "database", "service"])
        XCTAssertEqual(checks[0].status, .problem)
        XCTAssertEqual(checks[0].fix, "`rfkill unblock bluetooth`")
        XCTAssertEqual(checks[1].status, .problem)
        XCTAssertTrue(checks[1].fix?.contains("systemctl enable --now bluetooth") == true, "\(checks[1])")
        XCTAssertEqual(checks[2].status, .ok)
        XCTAssertTrue(checks[2].detail.hasSuffix("will be made on the first ride"), checks[2].detail)
        XCTAssertEqual(
            checks[3],
            HealthCheck(name: "service", status: .ok, detail: "not installed: cyclelog records when started by hand"))
    }

    func testTheServiceIsCheckedWithSystemctlWithoutRoot() async throws {
        let running = await SetupDoctor(probes: try probes(unitInstalled: true, activeStatus: 0)).checks()
        XCTAssertEqual(running.last, HealthCheck(name: "service", status: .ok, detail: "installed and running"))
        let stopped = await SetupDoctor(probes: try probes(unitInstalled: true, activeStatus: 3)).checks()
        XCTAssertEqual(stopped.last?.status, .warning)
        XCTAssertEqual(stopped.last?.detail, "installed but not running")
        XCTAssertTrue(stopped.last?.fix?.contains("journalctl -u cyclelog") == true)
    }
}
