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
        let services = HubBridge.services(passingControl: false)
        func value(_ uuid: Characteristic) throws -> [UInt8] {
            try #require(services.flatMap(\.characteristics).first { $0.uuid == uuid.rawValue }).value
        }
        #expect(services.map(\.uuid) == [0x1818, 0x1816, 0x180D, 0x1826])
        #expect(try CyclingPowerFeature(decoding: value(.cyclingPowerFeature)).features == [.crankRevolutionData])
        #expect(try CSCFeature(decoding: value(.cscFeature)).features == [.wheelRevolutionData, .crankRevolutionData])
        let controlPoint = try #require(
            services.flatMap(\.characteristics).first { $0.uuid == Characteristic.scControlPoint.rawValue })
        #expect(controlPoint.properties == [.write, .indicate])
        let machine = try FitnessMachineFeature(decoding: value(.fitnessMachineFeature))
        #expect(machine.fitnessMachineFeatures == 1 << 1 | 1 << 10 | 1 << 14)
        #expect(machine.targetSettingFeatures == 0)
        #expect(try value(.bodySensorLocation) == [0x01])
        // The default name fits the advertisement with the four services (31 bytes: 3 + 10 + 2 + the name).
        #expect(HubBridge.defaultName.utf8.count <= 16)
        #expect(!services.flatMap(\.characteristics).contains { $0.uuid == 0x2AD9 })
    }

    /// A hub that passes an app's control on has the Fitness Machine's control point (write and indicate, FTMS
    /// 4.16), its status (notify) and the ranges of the targets it offers, read as FTMS 4.13 and 4.14 lay them out:
    /// a power range of 0–2000 W in steps of 1 W (`00 00 d0 07 01 00`) until the real trainer declares its own, and
    /// resistance levels 0–25.5 in steps of 0.1 (`00 00 ff 00 01 00`).
    @Test func aHubPassingControlHasTheFitnessMachinesControlPointAndRanges() throws {
        let machine = try #require(HubBridge.services(passingControl: true).last)
        #expect(machine.uuid == 0x1826)
        func characteristic(_ uuid: Characteristic) throws -> BlueZPeripheral.Characteristic {
            try #require(machine.characteristics.first { $0.uuid == uuid.rawValue })
        }
        #expect(try characteristic(.fitnessMachineControlPoint).properties == [.write, .indicate])
        #expect(try characteristic(.fitnessMachineStatus).properties == [.notify])
        #expect(try characteristic(.supportedPowerRange).value == [0x00, 0x00, 0xD0, 0x07, 0x01, 0x00])
        #expect(try characteristic(.supportedResistanceLevelRange).value == [0x00, 0x00, 0xFF, 0x00, 0x01, 0x00])
        #expect(HubBridge.address(ofDevice: "/org/bluez/hci1/dev_00_AA_02_00_00_06") == "00:AA:02:00:00:06")
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
            if let change = await hub.apps(event) { said.append(change.line) }
        }
        #expect(
            said == [
                "an app connected to the hub: iPad (00:AA:02:00:00:06)", "iPad (00:AA:02:00:00:06) left the hub",
                "an app connected to the hub: iPad (00:AA:02:00:00:06)", "iPad (00:AA:02:00:00:06) left the hub",
            ])
    }

    /// BlueZ reads an app's name after its link is up: the name is said once and passed on (the screens name the
    /// app from then on); a later change of anything else says nothing.
    @Test func anAppsNameReadLaterIsPassedOnOnce() async throws {
        let bus = try PrivateBus()
        let hub = HubBridge(
            connection: try await DBusConnection.connect(to: .address(bus.address)), adapter: adapters[1])
        func device(name: String?, rssi: Int? = nil) -> BluetoothDevice {
            BluetoothDevice(
                path: "/org/bluez/hci1/dev_00_AA_02_00_00_06", adapterPath: "/org/bluez/hci1",
                address: "00:AA:02:00:00:06", name: name, rssiDBm: rssi, serviceUUIDs: [], connected: true)
        }
        var changes: [HubBridge.AppChange] = []
        for event in [device(name: nil), device(name: "Zwift"), device(name: "Zwift", rssi: -50)] {
            if let change = await hub.apps(.deviceChanged(event)) { changes.append(change) }
        }
        #expect(
            changes == [
                .init(
                    line: "an app connected to the hub: 00:AA:02:00:00:06",
                    joined: .init(address: "00:AA:02:00:00:06", name: nil)),
                .init(
                    line: "the app at 00:AA:02:00:00:06 is Zwift",
                    joined: .init(address: "00:AA:02:00:00:06", name: "Zwift")),
            ])
    }
}
