import Workouts
import XCTest

@testable import BlueZ
@testable import LiveRecording

/// The recorder's sensors by identity: found by name or address, kept through bluetoothd restarts and removed
/// devices, and described the same way whenever a ride opens.
final class SensorRosterTests: XCTestCase {
    func device(_ path: String, _ address: String, _ name: String?, connected: Bool = false, battery: Int? = nil)
        -> BluetoothDevice
    {
        BluetoothDevice(
            path: path, adapterPath: "/org/bluez/hci0", address: address, addressType: "public", name: name,
            alias: name ?? address, rssiDBm: nil, serviceUUIDs: [], connected: connected, servicesResolved: false,
            batteryPercent: battery)
    }

    func testSensorsAreFoundByNameOrAddressAndTheMissingAreSaid() {
        var roster = SensorRoster(wanted: ["Stages Power", "c0:11:22:33:44:55", "HRM"], policy: ReconnectPolicy())
        let devices = [
            device("/org/bluez/hci0/dev_C0_11_22_33_44_55", "C0:11:22:33:44:55", "Speed", connected: true),
            device("/org/bluez/hci0/dev_D4_22_33_44_55_66", "D4:22:33:44:55:66", "Stages Power", battery: 81),
        ]
        let (found, missing) = roster.locate(in: devices)
        XCTAssertEqual(found.map(\.wanted), ["Stages Power", "c0:11:22:33:44:55"])
        XCTAssertEqual(found.map(\.connected), [false, true])
        XCTAssertTrue(missing, "the heart-rate strap is not there")
        XCTAssertEqual(roster["Stages Power"]?.address, "D4:22:33:44:55:66")
        XCTAssertEqual(roster["Stages Power"]?.batteryPercent, 81)
        XCTAssertEqual(roster["c0:11:22:33:44:55"]?.label, "Speed")
        XCTAssertNil(roster["HRM"]?.devicePath)
        XCTAssertEqual(roster["HRM"]?.journalAddress, "HRM", "named as the rider named it until BlueZ says")
        XCTAssertEqual(roster.name(ofAddress: "D4:22:33:44:55:66"), "Stages Power")
        XCTAssertEqual(roster.used.map(\.address), ["D4:22:33:44:55:66", "C0:11:22:33:44:55"])
    }

    func testABluetoothdRestartKeepsEachSensorsIdentityWhereverBlueZPutsItNext() {
        var roster = SensorRoster(wanted: ["Power", "Speed"], policy: ReconnectPolicy())
        _ = roster.locate(in: [
            device("/org/bluez/hci0/dev_A", "AA:00:00:00:00:01", "Power"),
            device("/org/bluez/hci0/dev_B", "AA:00:00:00:00:02", "Speed"),
        ])
        roster.update("Power") { $0.batteryPercent = 50 }
        XCTAssertEqual(roster.forgetDevice(nil), ["Power", "Speed"], "bluetoothd left: every sensor is gone")
        XCTAssertNil(roster["Power"]?.devicePath)
        // Back in the other order, at other paths.
        let (found, missing) = roster.locate(in: [
            device("/org/bluez/hci1/dev_B", "AA:00:00:00:00:02", "Speed"),
            device("/org/bluez/hci1/dev_A", "AA:00:00:00:00:01", "Power"),
        ])
        XCTAssertFalse(missing)
        XCTAssertEqual(found.map(\.wanted), ["Power", "Speed"])
        XCTAssertEqual(roster["Power"]?.devicePath, "/org/bluez/hci1/dev_A")
        XCTAssertEqual(roster["Power"]?.batteryPercent, 50, "what was known of the sensor is kept")
        XCTAssertEqual(roster.sensor(atDevicePath: "/org/bluez/hci1/dev_B")?.wanted, "Speed")
    }

    func testARemovedDeviceForgetsOnlyItsSensorAndALostSensorIsNotWrittenTo() {
        var roster = SensorRoster(wanted: ["Power", "Speed"], policy: ReconnectPolicy())
        _ = roster.locate(in: [
            device("/org/bluez/hci0/dev_A", "AA:00:00:00:00:01", "Power"),
            device("/org/bluez/hci0/dev_B", "AA:00:00:00:00:02", "Speed"),
        ])
        XCTAssertEqual(roster.forgetDevice("/org/bluez/hci0/dev_B"), ["Speed"])
        XCTAssertEqual(roster["Power"]?.devicePath, "/org/bluez/hci0/dev_A")
        // A connection attempt that finishes after a scan replaced the roster writes to nobody.
        roster.want(["CC:00:00:00:00:03"])
        XCTAssertNil(roster.update("Power") { $0.batteryPercent = 10 })
        XCTAssertEqual(roster.wanted, ["CC:00:00:00:00:03"])
    }

    func testEachRideOpensWithTheConnectedSensorsLatestDescriptions() {
        var roster = SensorRoster(wanted: ["Power", "Speed"], policy: ReconnectPolicy())
        _ = roster.locate(in: [
            device("/org/bluez/hci0/dev_A", "AA:00:00:00:00:01", "Power"),
            device("/org/bluez/hci0/dev_B", "AA:00:00:00:00:02", "Speed"),
        ])
        let events: [RideEvent.Kind] = [
            .connected(sensor: "AA:00:00:00:00:02", name: "Speed"),
            .connected(sensor: "AA:00:00:00:00:01", name: "Power"),
            .wheelCircumference(sensor: "AA:00:00:00:00:01", millimetres: 2105),
            .read(sensor: "AA:00:00:00:00:01", characteristic: 0x2A19, value: [90]),
            .notification(sensor: "AA:00:00:00:00:01", characteristic: 0x2A63, value: [0, 0, 0, 0]),
            .read(sensor: "AA:00:00:00:00:01", characteristic: 0x2A19, value: [89]),
            .disconnected(sensor: "AA:00:00:00:00:02"),
        ]
        for (second, kind) in events.enumerated() {
            roster.describe(RideEvent(timeMicroseconds: Int64(second) * 1_000_000, kind))
        }
        XCTAssertEqual(
            roster.openingDescriptions.map(\.kind),
            [
                .connected(sensor: "AA:00:00:00:00:01", name: "Power"),
                .wheelCircumference(sensor: "AA:00:00:00:00:01", millimetres: 2105),
                .read(sensor: "AA:00:00:00:00:01", characteristic: 0x2A19, value: [89]),
            ], "the disconnected sensor is not described; the battery is the latest read")
    }
}
