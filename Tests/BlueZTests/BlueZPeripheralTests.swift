import BlueZ
import DBus
import Foundation
import TestSupport
import XCTest

/// The peripheral as bluetoothd 5.66 uses an application (src/gatt-database.c, src/advertising.c): it reads the
/// objects with GetManagedObjects when the application is registered and the advertisement with Properties.GetAll,
/// then calls ReadValue, WriteValue, StartNotify and StopNotify for the apps connected to it, and turns each
/// `Value` PropertiesChanged into a notification. Here a connection of the test owns org.bluez and calls as
/// bluetoothd does; the VM's real-stack run has the real one.
final class BlueZPeripheralTests: XCTestCase {
    /// What the stand-in for bluetoothd was asked and read.
    actor Bluetoothd {
        var applications: [String: [String: DBusValue]] = [:]
        var advertisements: [String: [String: DBusValue]] = [:]
        var calls: [String] = []

        func registered(_ path: String, _ objects: [String: DBusValue]) {
            applications[path] = objects
            calls.append("RegisterApplication \(path)")
        }
        func advertised(_ path: String, _ properties: [String: DBusValue]) {
            advertisements[path] = properties
            calls.append("RegisterAdvertisement \(path)")
        }
        func note(_ call: String) { calls.append(call) }
    }

    let adapter = "/org/bluez/hci1"

    /// org.bluez on a private bus with GattManager1 and LEAdvertisingManager1 on hci1.
    func startBluetoothd(_ bus: PrivateBus) async throws -> (DBusConnection, Bluetoothd) {
        let bluez = try await DBusConnection.connect(to: .address(bus.address))
        try await bluez.requestName("org.bluez")
        let seen = Bluetoothd()
        let register = ExportedInterface.Method(
            "RegisterApplication", in: [.init("application", "o"), .init("options", "a{sv}")]
        ) { [weak bluez] call throws(DBusError) in
            let path = call.body[0].string ?? ""
            let reply = try await bluez!.call(
                destination: call.sender, path: path, interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
            await seen.registered(path, reply.first?.dictionary ?? [:])
            return []
        }
        let unregister = ExportedInterface.Method("UnregisterApplication", in: [.init("application", "o")]) { call in
            await seen.note("UnregisterApplication \(call.body[0].string ?? "")")
            return []
        }
        let advertise = ExportedInterface.Method(
            "RegisterAdvertisement", in: [.init("advertisement", "o"), .init("options", "a{sv}")]
        ) { [weak bluez] call throws(DBusError) in
            let path = call.body[0].string ?? ""
            let reply = try await bluez!.call(
                destination: call.sender, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                [.string("org.bluez.LEAdvertisement1")])
            await seen.advertised(path, reply.first?.dictionary ?? [:])
            return []
        }
        let unadvertise = ExportedInterface.Method("UnregisterAdvertisement", in: [.init("advertisement", "o")]) {
            call in
            await seen.note("UnregisterAdvertisement \(call.body[0].string ?? "")")
            return []
        }
        try await bluez.export(
            [
                ExportedInterface(name: "org.bluez.GattManager1", methods: [register, unregister]),
                ExportedInterface(name: "org.bluez.LEAdvertisingManager1", methods: [advertise, unadvertise]),
            ], at: adapter)
        return (bluez, seen)
    }

    /// A private bus with the stand-in for bluetoothd on it, and a connection of the hub's own.
    func stage() async throws -> (bus: PrivateBus, bluez: DBusConnection, seen: Bluetoothd, connection: DBusConnection)
    {
        let bus = try PrivateBus()
        let (bluez, seen) = try await startBluetoothd(bus)
        return (bus, bluez, seen, try await DBusConnection.connect(to: .address(bus.address)))
    }

    /// The hub of these tests: `services` under /org/cyclelog/hub, named "cyclelog hub".
    func hub(
        on connection: DBusConnection, onWrite: @escaping BlueZPeripheral.WriteHandler = { _, _, _ in .accepted }
    ) -> BlueZPeripheral {
        BlueZPeripheral(
            connection: connection, root: "/org/cyclelog/hub", services: Self.services, localName: "cyclelog hub",
            onWrite: onWrite)
    }

    static let services = [
        BlueZPeripheral.Service(
            0x1818,
            [
                .init(0x2A63, [.notify]), .init(0x2A65, [.read], value: [0x0C, 0x00, 0x00, 0x00]),
                .init(0x2A5D, [.read], value: [0x0D]),
            ]),
        BlueZPeripheral.Service(0x1826, [.init(0x2AD2, [.notify]), .init(0x2AD9, [.write, .indicate])]),
    ]

    /// What the hub's object manager answers bluetoothd now.
    func exported(by hub: DBusConnection, asking bluez: DBusConnection) async throws -> [String: DBusValue]? {
        try await bluez.call(
            destination: hub.uniqueName, path: "/org/cyclelog/hub", interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects"
        ).first?.dictionary
    }

    /// The characteristic path of `uuid` in what bluetoothd read.
    func path(of uuid: UInt16, in objects: [String: DBusValue]) -> String? {
        objects.first { _, interfaces in
            interfaces.dictionary?["org.bluez.GattCharacteristic1"]?.dictionary?["UUID"]?.string
                == BluetoothUUID.full(uuid)
        }?.key
    }

    func testBluetoothdReadsTheServicesAndTheAdvertisementAndAnUnregisteredHubIsGone() async throws {
        let (bus, bluez, seen, connection) = try await stage()
        defer { withExtendedLifetime(bus) {} }
        let hub = hub(on: connection)
        try await hub.register(on: adapter)

        let applications = await seen.applications
        let objects = try XCTUnwrap(applications["/org/cyclelog/hub"])
        // Two services, five characteristics, and the advertisement (bluetoothd skips interfaces it does not serve).
        XCTAssertEqual(objects.count, 8)
        let services = objects.values.compactMap { $0.dictionary?["org.bluez.GattService1"]?.dictionary }
        XCTAssertEqual(
            Set(services.compactMap { $0["UUID"]?.string }), [BluetoothUUID.full(0x1818), BluetoothUUID.full(0x1826)])
        XCTAssertTrue(services.allSatisfy { $0["Primary"] == .variant(.boolean(true)) })
        let controlPoint = try XCTUnwrap(path(of: 0x2AD9, in: objects))
        let characteristic = try XCTUnwrap(
            objects[controlPoint]?.dictionary?["org.bluez.GattCharacteristic1"]?.dictionary)
        XCTAssertEqual(characteristic["Flags"], .variant(.strings(["write", "indicate"])))
        let service = try XCTUnwrap(characteristic["Service"]?.string)
        XCTAssertEqual(
            objects[service]?.dictionary?["org.bluez.GattService1"]?.dictionary?["UUID"]?.string,
            BluetoothUUID.full(0x1826))

        let advertisements = await seen.advertisements
        let advertisement = try XCTUnwrap(advertisements["/org/cyclelog/hub/advertisement"])
        XCTAssertEqual(advertisement["Type"], .variant(.string("peripheral")))
        // 16-bit UUIDs as BlueZ parses them (a 128-bit string would be advertised in 16 bytes).
        XCTAssertEqual(advertisement["ServiceUUIDs"], .variant(.strings(["1818", "1826"])))
        XCTAssertEqual(advertisement["LocalName"], .variant(.string("cyclelog hub")))

        await hub.unregister()
        await hub.unregister()
        let calls = await seen.calls
        XCTAssertEqual(
            calls,
            [
                "RegisterApplication /org/cyclelog/hub", "RegisterAdvertisement /org/cyclelog/hub/advertisement",
                "UnregisterAdvertisement /org/cyclelog/hub/advertisement", "UnregisterApplication /org/cyclelog/hub",
            ])
        let left = try await exported(by: connection, asking: bluez)
        XCTAssertEqual(left, [:])
    }

    /// 31 bytes of advertising data: Flags (3), four 16-bit UUIDs (2 + 8) and the name (2 + its bytes) leave 16 for
    /// the name. One byte more is refused in words before bluetoothd is asked anything.
    func testANameThatDoesNotFitTheAdvertisementIsRefusedBeforeAnythingIsRegistered() async throws {
        let (bus, _, seen, connection) = try await stage()
        defer { withExtendedLifetime(bus) {} }
        let four = [0x1818, 0x1816, 0x180D, 0x1826].map { BlueZPeripheral.Service($0, [.init(0x2A00, [.read])]) }
        let fits = BlueZPeripheral(
            connection: connection, root: "/org/cyclelog/fits", services: four,
            localName: String(repeating: "a", count: 16)
        ) { _, _, _ in .accepted }
        XCTAssertEqual(fits.advertisingDataCount, 31)
        let long = BlueZPeripheral(
            connection: connection, root: "/org/cyclelog/long", services: four,
            localName: "Café by the trainer"
        ) { _, _, _ in .accepted }
        do {
            try await long.register(on: adapter)
            XCTFail("a 20-byte name was advertised")
        } catch {
            XCTAssertTrue(error.description.contains("is 20 bytes"), error.description)
            XCTAssertTrue(error.description.contains("room for 16"), error.description)
        }
        let calls = await seen.calls
        XCTAssertEqual(calls, [])
    }

    /// An adapter without GattManager1 (here one bluetoothd does not have) is said as such, and nothing of the hub
    /// stays exported.
    func testAnAdapterThatCannotServeIsSaidInWordsAndLeavesNothingExported() async throws {
        let (bus, bluez, _, connection) = try await stage()
        defer { withExtendedLifetime(bus) {} }
        let hub = hub(on: connection)
        do {
            try await hub.register(on: "/org/bluez/hci7")
            XCTFail("a hub was served on an adapter without GattManager1")
        } catch {
            XCTAssertEqual(
                error.description,
                "offering the hub's services on hci7: this adapter offers programs no GATT server (BlueZ's "
                    + "org.bluez.GattManager1 is not on it; BlueZ 5.66 has it on every adapter that supports LE).")
        }
        let left = try await exported(by: connection, asking: bluez)
        XCTAssertEqual(left, [:])
    }

    func testReadsNotificationsAndWritesAsAnAppMakesThem() async throws {
        let (bus, bluez, seen, connection) = try await stage()
        defer { withExtendedLifetime(bus) {} }
        let writes = Writes()
        let hub = hub(on: connection) { uuid, value, device in
            await writes.add(uuid, value, device)
            return switch value.first {
            case 0x00: .accepted
            case 0x05: .procedureInProgress
            default: .applicationError(0x81)
            }
        }
        var events = await hub.events().makeAsyncIterator()
        try await hub.register(on: adapter)
        let applications = await seen.applications
        let objects = try XCTUnwrap(applications["/org/cyclelog/hub"])
        let measurement = try XCTUnwrap(path(of: 0x2A63, in: objects))
        let feature = try XCTUnwrap(path(of: 0x2A65, in: objects))
        let controlPoint = try XCTUnwrap(path(of: 0x2AD9, in: objects))
        func call(_ path: String, _ member: String, _ body: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
            try await bluez.call(
                destination: connection.uniqueName, path: path, interface: "org.bluez.GattCharacteristic1",
                member: member, body)
        }

        // Reads, whole and from an offset (a long read's second piece).
        let read = try await call(feature, "ReadValue", [.properties([])])
        XCTAssertEqual(read.first?.byteArray, [0x0C, 0x00, 0x00, 0x00])
        let tail = try await call(feature, "ReadValue", [.properties([("offset", .uint16(2))])])
        XCTAssertEqual(tail.first?.byteArray, [0x00, 0x00])
        do {
            _ = try await call(feature, "ReadValue", [.properties([("offset", .uint16(5))])])
            XCTFail("a read past the value's end answered")
        } catch {
            XCTAssertEqual(error.name, "org.bluez.Error.InvalidOffset")
        }

        // Nobody subscribed: nothing is sent.
        let sentBefore = try await hub.notify(0x2A63, [0x00, 0x00, 0x2C, 0x01])
        XCTAssertFalse(sentBefore)
        let values = try await bluez.signals(
            matching: MatchRule(
                sender: connection.uniqueName, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", path: measurement))
        var notifications = values.makeAsyncIterator()
        _ = try await call(measurement, "StartNotify")
        let subscribed = await events.next()
        XCTAssertEqual(subscribed, .subscribed(0x2A63))
        let notifying = await hub.isNotifying(0x2A63)
        XCTAssertTrue(notifying)
        // The same bytes twice are two notifications (a rider holding 300 W), each one Value.
        for watts: UInt8 in [0x2C, 0x2C, 0x2D] {
            let sent = try await hub.notify(0x2A63, [0x00, 0x00, watts, 0x01])
            XCTAssertTrue(sent)
        }
        var seenValues: [[UInt8]] = []
        while seenValues.count < 3, let signal = await notifications.next() {
            if let value = signal.body.dropFirst().first?.dictionary?["Value"] {
                seenValues.append(value.byteArray ?? [])
            }
        }
        XCTAssertEqual(seenValues, [[0, 0, 0x2C, 1], [0, 0, 0x2C, 1], [0, 0, 0x2D, 1]])
        _ = try await call(measurement, "StopNotify")
        let unsubscribed = await events.next()
        XCTAssertEqual(unsubscribed, .unsubscribed(0x2A63))
        let sentAfter = try await hub.notify(0x2A63, [0, 0, 0, 0])
        XCTAssertFalse(sentAfter)

        // Writes: the owner's answer as bluetoothd turns it into ATT (InProgress is 0xFE; Failed "0x81" is 0x81).
        let device = DBusValue.objectPath("/org/bluez/hci1/dev_C0_11_22_33_44_55")
        _ = try await call(controlPoint, "WriteValue", [.bytes([0x00]), .properties([("device", device)])])
        do {
            _ = try await call(controlPoint, "WriteValue", [.bytes([0x05, 0x2C, 0x01]), .properties([])])
            XCTFail("a write refused as in progress was accepted")
        } catch {
            XCTAssertEqual(error.name, "org.bluez.Error.InProgress")
        }
        do {
            _ = try await call(controlPoint, "WriteValue", [.bytes([0x11]), .properties([])])
            XCTFail("a write refused with an application error was accepted")
        } catch {
            XCTAssertEqual(error, DBusError(name: "org.bluez.Error.Failed", message: "0x81"))
        }
        // Over ATT's 512 bytes, or at an offset: refused before the owner sees them.
        for (bytes, options, name) in [
            ([UInt8](repeating: 0, count: 513), [(String, DBusValue)](), "org.bluez.Error.InvalidValueLength"),
            ([0x00], [("offset", .uint16(1))], "org.bluez.Error.InvalidOffset"),
        ] {
            do {
                _ = try await call(controlPoint, "WriteValue", [.bytes(bytes), .properties(options)])
                XCTFail("a write of \(bytes.count) bytes was accepted")
            } catch {
                XCTAssertEqual(error.name, name)
            }
        }
        let written = await writes.all
        XCTAssertEqual(written.map(\.value), [[0x00], [0x05, 0x2C, 0x01], [0x11]])
        XCTAssertEqual(written.map(\.uuid), [0x2AD9, 0x2AD9, 0x2AD9])
        XCTAssertEqual(written.first?.device, "/org/bluez/hci1/dev_C0_11_22_33_44_55")

        // bluetoothd releasing the advertisement (its adapter powered off) is said.
        _ = try await bluez.call(
            destination: connection.uniqueName, path: "/org/cyclelog/hub/advertisement",
            interface: "org.bluez.LEAdvertisement1", member: "Release")
        let released = await events.next()
        XCTAssertEqual(released, .advertisementReleased)
    }

    actor Writes {
        struct Write { var uuid: UInt16; var value: [UInt8]; var device: String? }
        var all: [Write] = []
        func add(_ uuid: UInt16, _ value: [UInt8], _ device: String?) {
            all.append(Write(uuid: uuid, value: value, device: device))
        }
    }
}
