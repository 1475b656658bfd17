import Foundation
import TestSupport
import XCTest

@testable import DBus

/// Two connections on a private dbus-daemon: calls, errors, timeouts, signals and exported objects.
final class ConnectionTests: XCTestCase {
    func testCallsSignalsAndExportedObjects() async throws {
        let bus = try PrivateBus()
        let server = try await DBusConnection.connect(to: .address(bus.address))
        let client = try await DBusConnection.connect(to: .address(bus.address))
        XCTAssertNotEqual(server.uniqueName, client.uniqueName)
        try await server.requestName("org.example.Test")

        let echo = ExportedInterface.Method(
            "Echo", in: [.init("value", "v")], out: [.init("value", "v"), .init("sender", "s")]
        ) { call in [call.body[0], .string(call.sender)] }
        let fail = ExportedInterface.Method("Fail") { (_) throws(DBusError) in
            throw DBusError(name: "org.example.Error.Nope", message: "not today")
        }
        let slow = ExportedInterface.Method("Slow") { _ in
            try? await Task.sleep(for: .seconds(5))
            return []
        }
        try await server.export(
            [
                ExportedInterface(
                    name: "org.example.Echo", methods: [echo, fail, slow], properties: [.init("Count", "u")])
            ],
            at: "/org/example/Object", properties: ["org.example.Echo": ["Count": .uint32(1)]])

        let reply = try await client.call(
            destination: "org.example.Test", path: "/org/example/Object", interface: "org.example.Echo",
            member: "Echo", [.variant(.bytes([1, 2]))])
        XCTAssertEqual(reply, [.variant(.bytes([1, 2])), .string(client.uniqueName)])

        do {
            _ = try await client.call(
                destination: "org.example.Test", path: "/org/example/Object", interface: "org.example.Echo",
                member: "Fail")
            XCTFail("Fail returned")
        } catch {
            XCTAssertEqual(error, DBusError(name: "org.example.Error.Nope", message: "not today"))
        }
        do {
            _ = try await client.call(
                destination: "org.example.Test", path: "/org/example/Object", interface: "org.example.Echo",
                member: "Echo", [.string("wrong type")])
            XCTFail("a wrong signature was accepted")
        } catch {
            XCTAssertEqual(error.name, DBusError.invalidArgumentsName)
        }
        let started = ContinuousClock.now
        do {
            _ = try await client.call(
                destination: "org.example.Test", path: "/org/example/Object", interface: "org.example.Echo",
                member: "Slow", timeout: .milliseconds(300))
            XCTFail("Slow returned before its timeout")
        } catch {
            XCTAssertEqual(error.name, DBusError.noReplyName)
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(3))
        }
        do {
            _ = try await client.call(
                destination: "org.example.Missing", path: "/", interface: "org.example.Echo", member: "Echo")
            XCTFail("a call to nobody returned")
        } catch {
            XCTAssertEqual(error.name, DBusError.serviceUnknownName)
        }

        // Properties and PropertiesChanged, as another program mirroring the object would see them.
        let changes = try await client.signals(
            matching: MatchRule(
                sender: "org.example.Test", interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", path: "/org/example/Object"))
        let all = try await client.call(
            destination: "org.example.Test", path: "/org/example/Object",
            interface: "org.freedesktop.DBus.Properties", member: "GetAll", [.string("org.example.Echo")])
        XCTAssertEqual(all.first?.dictionary?["Count"], .variant(.uint32(1)))
        try await server.setProperties(
            ["Count": .uint32(1)], interface: "org.example.Echo", path: "/org/example/Object")
        try await server.setProperties(
            ["Count": .uint32(2)], interface: "org.example.Echo", path: "/org/example/Object")
        var iterator = changes.makeAsyncIterator()
        let changed = await iterator.next()
        // An unchanged value emits nothing, so the first signal carries 2.
        XCTAssertEqual(changed?.body.first, .string("org.example.Echo"))
        XCTAssertEqual(changed?.body.dropFirst().first?.dictionary?["Count"], .variant(.uint32(2)))

        let xml = try await client.call(
            destination: "org.example.Test", path: "/org/example/Object",
            interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        XCTAssertTrue(xml.first?.string?.contains("<method name=\"Echo\">") == true)
        let root = try await client.call(
            destination: "org.example.Test", path: "/", interface: "org.freedesktop.DBus.Introspectable",
            member: "Introspect")
        XCTAssertTrue(root.first?.string?.contains("<node name=\"org\"/>") == true)

        let uid = try await client.unixUser(of: server.uniqueName)
        XCTAssertEqual(uid, getuid())
    }

    /// An object manager answers `GetManagedObjects` with the objects below it (not those beside it), each with its
    /// interfaces and their properties, and announces objects exported or withdrawn below it; a value announced as
    /// unchanged is emitted again (a notification of the same bytes).
    func testAnObjectManagerAnswersWhatIsBelowItAndAnnouncesChanges() async throws {
        let bus = try PrivateBus()
        let server = try await DBusConnection.connect(to: .address(bus.address))
        let client = try await DBusConnection.connect(to: .address(bus.address))
        try await server.requestName("org.example.Test")
        let thing = ExportedInterface(name: "org.example.Thing", properties: [.init("Size", "u")])
        let plain = ExportedInterface(name: "org.example.Plain")
        try await server.exportObjectManager(at: "/org/example/app")
        try await server.export(
            [thing, plain], at: "/org/example/app/one", properties: ["org.example.Thing": ["Size": .uint32(7)]])
        try await server.export([plain], at: "/org/example/app/one/two")
        try await server.export(
            [thing], at: "/org/example/beside", properties: ["org.example.Thing": ["Size": .uint32(1)]])
        try await server.export([plain], at: "/org/example/application")

        let reply = try await client.call(
            destination: "org.example.Test", path: "/org/example/app", interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects")
        XCTAssertEqual(reply.first?.signature, "a{oa{sa{sv}}}")
        let objects = try XCTUnwrap(reply.first?.dictionary)
        XCTAssertEqual(Set(objects.keys), ["/org/example/app/one", "/org/example/app/one/two"])
        let one = try XCTUnwrap(objects["/org/example/app/one"]?.dictionary)
        XCTAssertEqual(Set(one.keys), ["org.example.Thing", "org.example.Plain"])
        XCTAssertEqual(one["org.example.Thing"]?.dictionary?["Size"], .variant(.uint32(7)))
        XCTAssertEqual(one["org.example.Plain"]?.dictionary, [:])
        let xml = try await client.call(
            destination: "org.example.Test", path: "/org/example/app", interface: "org.freedesktop.DBus.Introspectable",
            member: "Introspect")
        XCTAssertTrue(xml.first?.string?.contains("org.freedesktop.DBus.ObjectManager") == true)
        // Nothing else is a manager.
        do {
            _ = try await client.call(
                destination: "org.example.Test", path: "/org/example/beside",
                interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
            XCTFail("an object that is not a manager answered GetManagedObjects")
        } catch {
            XCTAssertEqual(error.name, DBusError.unknownMethodName)
        }

        let announced = try await client.signals(
            matching: MatchRule(sender: "org.example.Test", interface: "org.freedesktop.DBus.ObjectManager"))
        var announcements = announced.makeAsyncIterator()
        try await server.export(
            [thing], at: "/org/example/app/three", properties: ["org.example.Thing": ["Size": .uint32(3)]])
        await server.unexport("/org/example/app/one/two")
        let added = await announcements.next()
        XCTAssertEqual(added?.member, "InterfacesAdded")
        XCTAssertEqual(added?.path, "/org/example/app")
        XCTAssertEqual(added?.body.first, .objectPath("/org/example/app/three"))
        XCTAssertEqual(
            added?.body.dropFirst().first?.dictionary?["org.example.Thing"]?.dictionary?["Size"], .variant(.uint32(3)))
        let removed = await announcements.next()
        XCTAssertEqual(removed?.member, "InterfacesRemoved")
        XCTAssertEqual(removed?.body, [.objectPath("/org/example/app/one/two"), .strings(["org.example.Plain"])])

        let changes = try await client.signals(
            matching: MatchRule(
                sender: "org.example.Test", interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", path: "/org/example/app/one"))
        var changed = changes.makeAsyncIterator()
        for size: UInt32 in [7, 7, 8] {
            try await server.setProperties(
                ["Size": .uint32(size)], interface: "org.example.Thing", path: "/org/example/app/one",
                announcingUnchanged: true)
        }
        for size: UInt32 in [7, 7, 8] {
            let signal = await changed.next()
            XCTAssertEqual(signal?.body.dropFirst().first?.dictionary?["Size"], .variant(.uint32(size)))
        }
    }

    /// A call whose task is cancelled ends at once, not when its timeout runs out, and leaves nothing waiting.
    func testACancelledCallEndsAtOnceAndLeavesNothingBehind() async throws {
        let bus = try PrivateBus()
        let server = try await DBusConnection.connect(to: .address(bus.address))
        let client = try await DBusConnection.connect(to: .address(bus.address))
        try await server.requestName("org.example.Slow")
        let slow = ExportedInterface.Method("Slow") { _ in
            try? await Task.sleep(for: .seconds(30))
            return []
        }
        try await server.export(
            [ExportedInterface(name: "org.example.Slow", methods: [slow], properties: [])], at: "/org/example/Slow",
            properties: [:])
        let started = ContinuousClock.now
        let waiting = Task {
            try await client.call(
                destination: "org.example.Slow", path: "/org/example/Slow", interface: "org.example.Slow",
                member: "Slow", timeout: .seconds(25))
        }
        try await Task.sleep(for: .milliseconds(300))
        let waitingNow = await client.waitingCallCount
        XCTAssertEqual(waitingNow, 1)
        waiting.cancel()
        do {
            _ = try await waiting.value
            XCTFail("a cancelled call returned")
        } catch {
            XCTAssertEqual((error as? DBusError)?.name, DBusError.cancelledName)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        let left = await client.waitingCallCount
        XCTAssertEqual(left, 0)
        // The connection goes on working; an answered call leaves nothing waiting either.
        _ = try await client.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetId")
        let afterAnswer = await client.waitingCallCount
        XCTAssertEqual(afterAnswer, 0)
    }

    /// Calls of a method served in arrival order are answered one after another in the order they were sent, even
    /// when a later one would finish first; calls of any other method run side by side.
    func testAMethodServedInArrivalOrderHandlesOneCallAfterAnother() async throws {
        let bus = try PrivateBus()
        let server = try await DBusConnection.connect(to: .address(bus.address))
        let client = try await DBusConnection.connect(to: .address(bus.address))
        try await server.requestName("org.example.Queue")
        let finished = FinishedCalls()
        /// Call `i` of 5 takes (5 - i) × 80 ms: the first sent is the slowest.
        func method(_ name: String, inArrivalOrder: Bool) -> ExportedInterface.Method {
            ExportedInterface.Method(name, in: [.init("index", "u")], inArrivalOrder: inArrivalOrder) { call in
                guard case .uint32(let index)? = call.body.first else { return [] }
                try? await Task.sleep(for: .milliseconds(80 * (5 - Int(index))))
                await finished.add(name, Int(index))
                return []
            }
        }
        try await server.export(
            [
                ExportedInterface(
                    name: "org.example.Queue",
                    methods: [method("InOrder", inArrivalOrder: true), method("AsTheyCome", inArrivalOrder: false)],
                    properties: [])
            ], at: "/org/example/Queue", properties: [:])
        for member in ["InOrder", "AsTheyCome"] {
            for index in 0..<5 {
                try await client.send(
                    .methodCall(
                        destination: "org.example.Queue", path: "/org/example/Queue", interface: "org.example.Queue",
                        member: member, body: [.uint32(UInt32(index))]))
            }
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while await finished.count < 10, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let inOrder = await finished.order["InOrder"]
        let asTheyCome = await finished.order["AsTheyCome"] ?? []
        XCTAssertEqual(inOrder, [0, 1, 2, 3, 4])
        // Side by side, the fastest (sent last) finishes 320 ms before the slowest (sent first).
        XCTAssertEqual(asTheyCome.count, 5)
        XCTAssertLessThan(asTheyCome.firstIndex(of: 4) ?? 5, asTheyCome.firstIndex(of: 0) ?? -1)
    }

    /// The bus daemon dying ends every stream and fails calls instead of hanging them.
    func testLosingTheBusEndsStreamsAndFailsCalls() async throws {
        var bus: PrivateBus? = try PrivateBus()
        let client = try await DBusConnection.connect(to: .address(bus!.address))
        let signals = try await client.signals(matching: MatchRule(interface: "org.example.Nothing"))
        bus = nil
        for await _ in signals {}
        do {
            _ = try await client.call(destination: "org.freedesktop.DBus", path: "/", interface: "a.B", member: "C")
            XCTFail("a call on a lost connection returned")
        } catch {
            XCTAssertEqual(error.name, DBusError.disconnectedName)
        }
    }

    func testConnectingToNoBusIsAnError() async {
        do {
            _ = try await DBusConnection.connect(to: .address("unix:path=/nonexistent/cyclelog-test-bus"))
            XCTFail("connected to nothing")
        } catch {
            XCTAssertFalse(error.description.isEmpty)
        }
    }
}

/// The calls a test's handlers finished, by method, in the order they finished.
private actor FinishedCalls {
    var order: [String: [Int]] = [:]
    var count: Int { order.values.map(\.count).reduce(0, +) }
    func add(_ method: String, _ index: Int) { order[method, default: []].append(index) }
}
