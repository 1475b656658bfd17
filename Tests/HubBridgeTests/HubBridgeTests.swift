import BlueZ
import CyclingSensors
import DBus
import LiveRecording
import TestSupport
import Testing

@testable import HubBridge

/// The hub's place and what it says of itself.
struct HubBridgeTests {
    let adapters = [
        BluetoothAdapter(
            path: "/org/bluez/hci0", address: "00:AA:01:00:00:01", name: "box", powered: true, discovering: false),
        BluetoothAdapter(
            path: "/org/bluez/hci1", address: "00:AA:01:00:00:02", name: "dongle", powered: true, discovering: false),
    ]

    /// A second adapter by default; the one named when named (even the recorder's own); none beside the recorder's
    /// is refused in words.
    @Test func theHubAdvertisesOnAnAdapterOfItsOwnUnlessOneIsNamed() throws {
        #expect(
            try HubBridge.chooseAdapter(adapters, named: nil, recordingOn: "/org/bluez/hci0").path == "/org/bluez/hci1")
        #expect(
            try HubBridge.chooseAdapter(adapters, named: nil, recordingOn: "/org/bluez/hci1").path == "/org/bluez/hci0")
        #expect(
            try HubBridge.chooseAdapter(adapters, named: "hci0", recordingOn: "/org/bluez/hci0").path
                == "/org/bluez/hci0")
        #expect(
            try HubBridge.chooseAdapter(adapters, named: "00:aa:01:00:00:02", recordingOn: "/org/bluez/hci0").path
                == "/org/bluez/hci1")
        do {
            _ = try HubBridge.chooseAdapter(Array(adapters.prefix(1)), named: nil, recordingOn: "/org/bluez/hci0")
            Issue.record("a hub shared the recorder's only adapter unasked")
        } catch {
            #expect(error.description.contains("adapter of its own"))
            #expect(error.description.contains("--bridge-adapter"))
        }
    }

    /// What an app reads says what the notifications carry, decoded by the same decoders the sensors' values go
    /// through: crank data in the power measurement; wheel and crank data in CSC (with the control point CSCS
    /// makes mandatory for wheel data); the Indoor Bike Data's cadence, heart rate and power, and no target.
    @Test func whatAnAppReadsDeclaresWhatItIsSent() throws {
        func value(_ uuid: Characteristic) throws -> [UInt8] {
            try #require(HubBridge.services.flatMap(\.characteristics).first { $0.uuid == uuid.rawValue }).value
        }
        #expect(HubBridge.services.map(\.uuid) == [0x1818, 0x1816, 0x180D, 0x1826])
        #expect(try CyclingPowerFeature(decoding: value(.cyclingPowerFeature)).features == [.crankRevolutionData])
        #expect(try CSCFeature(decoding: value(.cscFeature)).features == [.wheelRevolutionData, .crankRevolutionData])
        let controlPoint = try #require(
            HubBridge.services.flatMap(\.characteristics).first { $0.uuid == Characteristic.scControlPoint.rawValue })
        #expect(controlPoint.properties == [.write, .indicate])
        let machine = try FitnessMachineFeature(decoding: value(.fitnessMachineFeature))
        #expect(machine.fitnessMachineFeatures == 1 << 1 | 1 << 10 | 1 << 14)
        #expect(machine.targetSettingFeatures == 0)
        #expect(try value(.bodySensorLocation) == [0x01])
        // The default name fits the advertisement with the four services (31 bytes: 3 + 10 + 2 + the name).
        #expect(HubBridge.defaultName.utf8.count <= 16)
    }

    /// An app on the hub's adapter connecting and leaving is said once each; a sensor on the recorder's adapter, a
    /// property change that is not a connection, and a device that was never connected say nothing.
    @Test func anAppConnectingAndLeavingIsSaidOnceEach() async throws {
        let bus = try PrivateBus()
        let hub = HubBridge(
            connection: try await DBusConnection.connect(to: .address(bus.address)), adapter: adapters[1])
        func device(_ adapter: String, connected: Bool, rssi: Int? = nil) -> BluetoothDevice {
            BluetoothDevice(
                path: "\(adapter)/dev_00_AA_02_00_00_06", adapterPath: adapter, address: "00:AA:02:00:00:06",
                name: "iPad", rssiDBm: rssi, serviceUUIDs: [], connected: connected)
        }
        let app = "/org/bluez/hci1", sensors = "/org/bluez/hci0"
        var said: [String] = []
        for event in [
            BlueZEvent.deviceChanged(device(sensors, connected: true)),
            .deviceChanged(device(app, connected: false)),
            .deviceChanged(device(app, connected: true)),
            .deviceChanged(device(app, connected: true, rssi: -40)),
            .deviceChanged(device(app, connected: false)),
            .deviceChanged(device(app, connected: true)),
            .deviceRemoved(path: "\(app)/dev_00_AA_02_00_00_06"),
            .deviceRemoved(path: "\(app)/dev_00_AA_02_00_00_06"),
        ] {
            if let line = await hub.apps(event) { said.append(line) }
        }
        #expect(
            said == [
                "an app connected to the hub: iPad (00:AA:02:00:00:06)", "iPad (00:AA:02:00:00:06) left the hub",
                "an app connected to the hub: iPad (00:AA:02:00:00:06)", "iPad (00:AA:02:00:00:06) left the hub",
            ])
    }
}
