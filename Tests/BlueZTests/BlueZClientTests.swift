import BlueZ
import DBus
import TestSupport
import XCTest

/// The BlueZ client against the stand-in: discovery with a filter, connect, GATT found by UUID, reads that are
/// not notifications, notifications, and the error a rider sees when the D-Bus policy refuses.
final class BlueZClientTests: XCTestCase {
    /// A scan that is not running (bluetoothd ended it) stops without an error: bluetoothd's answer "No discovery
    /// started" is what was wanted, not a problem to show on every status line while the recorder waits.
    func testStoppingAScanThatIsNotRunningIsNotAnError() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let bluez = try await BlueZClient.connect(to: .address(standIn.bus.address))
        try await bluez.stopDiscovery("/org/bluez/hci0")
        try await bluez.startDiscovery("/org/bluez/hci0", services: [0x1818])
        try await bluez.stopDiscovery("/org/bluez/hci0")
        try await bluez.stopDiscovery("/org/bluez/hci0")
        // Any other refusal still is one.
        do {
            try await bluez.stopDiscovery("/org/bluez/hci9")
            XCTFail("a missing adapter stopped its scan")
        } catch {}
    }

    func testDiscoveryConnectReadAndNotify() async throws {
        var power = StandIn.power
        power["measurementFlags"] = ["read", "notify"]
        let standIn = try StandIn(sensors: [power, StandIn.heartRate])
        try await standIn.waitUntilReady()
        let bluez = try await BlueZClient.connect(to: .address(standIn.bus.address))
        let adapters = await bluez.adapters
        XCTAssertEqual(adapters.map(\.path), ["/org/bluez/hci0"])
        let initialDevices = await bluez.devices
        XCTAssertTrue(initialDevices.isEmpty, "devices appear only once discovery runs")

        var events = await bluez.events().makeAsyncIterator()
        try await bluez.startDiscovery("/org/bluez/hci0", services: [0x1818])
        var device: BluetoothDevice?
        // Battery1 is added to the device object after Device1 (as BlueZ's battery plugin does).
        while device?.batteryPercent == nil, let event = await events.next() {
            if case .deviceChanged(let changed) = event { device = changed }
        }
        XCTAssertEqual(device?.address, "C0:11:22:33:44:01")
        XCTAssertEqual(device?.displayName, "Stages Power L")
        XCTAssertEqual(device?.shortServiceUUIDs, [0x1818, 0x180F])
        XCTAssertEqual(device?.batteryPercent, 80)
        let allDevices = await bluez.devices
        XCTAssertEqual(allDevices.map(\.address), ["C0:11:22:33:44:01"], "the filter keeps the strap out")

        let path = try XCTUnwrap(device?.path)
        try await bluez.connect(path)
        let connected = await bluez.device(path)
        XCTAssertEqual(connected?.connected, true)
        XCTAssertEqual(connected?.servicesResolved, true)
        let characteristics = await bluez.characteristics(ofDevice: path)
        let measurement = try XCTUnwrap(characteristics.first { $0.shortUUID == 0x2A63 })
        let feature = try XCTUnwrap(characteristics.first { $0.shortUUID == 0x2A65 })
        XCTAssertEqual(measurement.serviceUUID, "00001818-0000-1000-8000-00805f9b34fb")
        // The stand-in names the measurement's object after its declaration at 0x000D, as bluetoothd does: its
        // value follows at 0x000E.
        XCTAssertEqual(measurement.valueHandle, 0x000E)
        var unnamed = measurement
        unnamed.path = path + "/service000c/characteristic"
        XCTAssertNil(unnamed.valueHandle)
        let featureValue = try await bluez.read(feature)
        XCTAssertEqual(featureValue, [0x08, 0, 0, 0])

        // A second consumer (the calibration code beside the recorder) that stops after one notification: its
        // end must not end the first consumer's stream.
        let other = await bluez.events()
        let brief = Task {
            for await event in other { if case .notification = event { return true } }
            return false
        }
        try await bluez.startNotify(measurement)
        let briefSawOne = await brief.value
        XCTAssertTrue(briefSawOne)
        var notifications: [[UInt8]] = []
        var reads = 0
        while notifications.count < 8, let event = await events.next() {
            if case .notification(let characteristic, let value) = event {
                XCTAssertEqual(characteristic.shortUUID, 0x2A63)
                notifications.append(value)
                if notifications.count == 4 {
                    // A read of a subscribed characteristic changes Value too; it must not count.
                    _ = try await bluez.read(measurement)
                    reads += 1
                }
            }
        }
        try await bluez.stopNotify(measurement)
        let sent = try standIn.sent().map(\.value)
        XCTAssertEqual(reads, 1)
        XCTAssertEqual(Array(sent.prefix(notifications.count)), notifications, "exactly what was sent, in order")
    }

    func testAccessDeniedNamesThePolicyAndTheGroup() async throws {
        let bus = try PrivateBus(denySendingTo: ["org.bluez"])
        let standIn = try StandIn(sensors: [StandIn.power], bus: bus)
        try await standIn.waitUntilReady()
        do {
            _ = try await BlueZClient.connect(to: .address(bus.address))
            XCTFail("the policy was ignored")
        } catch {
            XCTAssertEqual(error.kind, .accessDenied)
            XCTAssertTrue(error.description.contains("bluetooth"), error.description)
            XCTAssertTrue(error.description.contains("usermod -aG bluetooth"), error.description)
        }
    }

    func testNoBluetoothdIsExplained() async throws {
        let bus = try PrivateBus()
        do {
            _ = try await BlueZClient.connect(to: .address(bus.address))
            XCTFail("connected to a BlueZ that is not there")
        } catch {
            XCTAssertEqual(error.kind, .bluetoothdNotRunning)
            XCTAssertTrue(error.description.contains("systemctl start bluetooth"), error.description)
        }
    }

    func testATTErrorsAreReadFromBlueZsFailedMessage() {
        // bluetoothd's create_gatt_dbus_error: "Operation failed with ATT error: 0x%02x" (src/error.c).
        let busy = BlueZError(
            DBusError(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0xfe"), while: "x")
        XCTAssertEqual(busy.attErrorCode, 0xFE)
        let other = BlueZError(DBusError(name: "org.bluez.Error.Failed", message: "Not connected"), while: "x")
        XCTAssertNil(other.attErrorCode)
        let denied = BlueZError(
            DBusError(name: "org.bluez.Error.NotPermitted", message: "ATT error: 0x03"), while: "x")
        XCTAssertNil(denied.attErrorCode, "only Failed carries a code to parse")
    }
}
