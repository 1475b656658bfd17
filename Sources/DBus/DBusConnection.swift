import CDBus
import Concurrency
import Dispatch
import Glibc

/// Which bus to connect to.
public enum BusAddress: Sendable, Equatable, CustomStringConvertible {
    /// The system bus (BlueZ lives here): `DBUS_SYSTEM_BUS_ADDRESS` or the standard socket.
    case system
    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`.
    case session
    /// Any bus by address, e.g. `unix:path=/tmp/test-bus` (tests run a private `dbus-daemon`).
    case address(String)

    /// `system`, `session` or an address.
    public init(_ text: String) {
        switch text {
        case "system": self = .system
        case "session": self = .session
        default: self = .address(text)
        }
    }

    public var description: String {
        switch self {
        case .system: "the system bus"
        case .session: "the session bus"
        case .address(let address): "the bus at \(address)"
        }
    }
}

/// One long-lived connection to a bus, owned by an actor that runs on its own serial queue. libdbus's
/// connection is not used from any other thread. The actor wakes when the bus socket becomes readable (a
/// dispatch source; there is no polling loop), reads what arrived, and routes it: replies to the calls
/// waiting for them, signals to the streams whose rules match, method calls to the exported objects.
///
/// Notify sessions and discovery sessions in BlueZ belong to the connection that asked for them, so one
/// connection must live for as long as they are needed.
public actor DBusConnection {
    private let executor: QueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// libdbus's `DBusConnection*`; never leaves this actor.
    private let raw: OpaquePointer
    private var readSource: DispatchSourceRead?
    /// The bus name the daemon gave this connection, e.g. `:1.42`.
    public nonisolated let uniqueName: String
    public private(set) var isConnected = true

    /// Calls waiting for their reply, each with the timer that gives up on it (cancelled when the reply comes).
    private var pendingCalls: [UInt32: PendingCall] = [:]
    private struct PendingCall {
        var continuation: CheckedContinuation<Result<DBusMessage, DBusError>, Never>
        var timer: Task<Void, Never>
    }
    private struct Subscriber {
        var rules: [MatchRule]
        var continuation: AsyncStream<DBusMessage>.Continuation
    }
    private var subscribers: [Int: Subscriber] = [:]
    private var nextSubscriberID = 0
    private var objects: [String: [String: ExportedInterface]] = [:]
    private var propertyValues: [String: [String: [String: DBusValue]]] = [:]
    /// Paths that answer `GetManagedObjects` for the objects exported below them (`exportObjectManager`).
    private var managerRoots: Set<String> = []
    /// The latest call of each method served in arrival order (by path and member), which the next one waits for.
    private var lastInArrivalOrder: [String: Task<Void, Never>] = [:]

    /// Connects and registers with the bus (`dbus_connection_open_private`, `dbus_bus_register`).
    public static func connect(to bus: BusAddress) async throws(DBusError) -> DBusConnection {
        var error = cdbus_error_make()
        let connection: OpaquePointer?
        switch bus {
        case .system:
            connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session:
            // Without DBUS_SESSION_BUS_ADDRESS libdbus tries to start a bus for an X11 display, and on a box without
            // one fails with words about X11. The session bus is then the socket of systemd's user instance.
            if (getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) } ?? "").isEmpty {
                let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) } ?? ""
                guard !runtime.isEmpty, access(runtime + "/bus", F_OK) == 0 else {
                    throw DBusError(name: Self.noSessionBusName, message: Self.noSessionBus)
                }
                // D-Bus addresses %-escape every byte outside [-0-9A-Za-z_/.*] (D-Bus specification, "Addresses").
                let escaped = (runtime + "/bus").utf8.map { byte -> String in
                    let plain =
                        (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte)
                        || (0x61...0x7a).contains(byte) || "-_/.*".utf8.contains(byte)
                    let hex = String(byte, radix: 16)
                    return plain ? String(UnicodeScalar(byte)) : "%" + (hex.count == 1 ? "0" + hex : hex)
                }
                return try await connect(to: .address("unix:path=" + escaped.joined()))
            }
            connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .address(let address):
            connection = dbus_connection_open_private(address, &error)
            if let connection, dbus_bus_register(connection, &error) == 0 {
                dbus_connection_close(connection)
                dbus_connection_unref(connection)
                throw DBusError(consuming: &error)
            }
        }
        guard let connection else { throw DBusError(consuming: &error) }
        // A lost bus must not end the process (libdbus's default for shared bus connections).
        dbus_connection_set_exit_on_disconnect(connection, 0)
        let name = dbus_bus_get_unique_name(connection).map { String(cString: $0) } ?? ""
        let result = DBusConnection(raw: connection, uniqueName: name)
        await result.startReading()
        return result
    }

    /// The error of a session without a session bus (a login without a desktop, a container).
    public static let noSessionBusName = "org.cyclelog.DBus.Error.NoSessionBus"
    static let noSessionBus =
        "there is no session bus here: DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus "
        + "(a login without a desktop, or without the dbus-user-session package)"

    private init(raw: OpaquePointer, uniqueName: String) {
        self.raw = raw
        self.uniqueName = uniqueName
        executor = QueueExecutor(label: "cyclelog.dbus \(uniqueName)")
    }

    isolated deinit {
        readSource?.cancel()
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
    }

    private func startReading() {
        var fd: Int32 = -1
        guard dbus_connection_get_unix_fd(raw, &fd) != 0 else {
            lose()
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: executor.queue)
        source.setEventHandler { [weak self] in
            self?.assumeIsolated { $0.socketReadable() }
        }
        source.resume()
        readSource = source
        // Messages (such as NameAcquired) may already be buffered from the registration.
        drain()
    }

    private func socketReadable() {
        dbus_connection_read_write(raw, 0)
        drain()
    }

    /// Routes every message libdbus has parsed.
    private func drain() {
        while let message = dbus_connection_pop_message(raw) {
            defer { dbus_message_unref(message) }
            guard let copied = try? DBusMessage(raw: message) else {
                if dbus_message_get_type(message) == cdbus_message_type_method_call {
                    reply(to: message, error: DBusError.invalid("the arguments could not be read"))
                }
                continue
            }
            route(copied)
        }
        if dbus_connection_get_is_connected(raw) == 0 { lose() }
    }

    private func route(_ message: DBusMessage) {
        switch message.kind {
        case .methodReturn, .error:
            finishCall(message.replySerial, .success(message))
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local" && message.member == "Disconnected" {
                lose()
                return
            }
            for subscriber in subscribers.values where subscriber.rules.contains(where: { $0.matches(message) }) {
                subscriber.continuation.yield(message)
            }
        case .methodCall:
            answer(message)
        }
    }

    /// The bus went away: every waiting call fails, every stream ends.
    private func lose() {
        guard isConnected else { return }
        isConnected = false
        readSource?.cancel()
        readSource = nil
        let lost = DBusError(name: DBusError.disconnectedName, message: "the connection to the bus was lost")
        for serial in Array(pendingCalls.keys) { finishCall(serial, .failure(lost)) }
        for subscriber in subscribers.values { subscriber.continuation.finish() }
        subscribers.removeAll()
    }

    // MARK: Sending

    /// Sends a message and returns its serial (`dbus_connection_send`, then a flush so it leaves now).
    @discardableResult
    public func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
        guard isConnected else {
            throw DBusError(name: DBusError.disconnectedName, message: "the connection to the bus was lost")
        }
        let rawMessage = try message.makeRaw()
        defer { dbus_message_unref(rawMessage) }
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, rawMessage, &serial) != 0 else {
            throw DBusError(name: DBusError.failedName, message: "out of memory while sending")
        }
        dbus_connection_flush(raw)
        drain()
        return serial
    }

    /// Calls a method and waits for its reply; an error reply is thrown with its D-Bus name. Gives up after
    /// `timeout` (`NoReply`), or at once when the calling task is cancelled (`cancelledName`); a reply that comes
    /// later is dropped.
    public func call(
        destination: String, path: String, interface: String, member: String, _ body: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        let message = DBusMessage.methodCall(
            destination: destination, path: path, interface: interface, member: member, body: body)
        let serial = try send(message)
        let noReply = DBusError(
            name: DBusError.noReplyName,
            message: "\(destination) did not answer \(member) within \(timeout.components.seconds) s")
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard !Task.isCancelled else {
                    continuation.resume(returning: Result<DBusMessage, DBusError>.failure(Self.cancelled(member)))
                    return
                }
                let timer = Task { [weak self] in
                    // Cancelled when the reply comes: no task is left sleeping for the rest of the timeout.
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    await self?.finishCall(serial, .failure(noReply))
                }
                pendingCalls[serial] = PendingCall(continuation: continuation, timer: timer)
            }
        } onCancel: {
            Task { await self.finishCall(serial, .failure(Self.cancelled(member))) }
        }
        let reply = try result.get()
        if reply.kind == .error {
            throw DBusError(name: reply.errorName ?? DBusError.failedName, message: reply.errorMessage)
        }
        return reply.body
    }

    /// Ends a waiting call once: its reply, its timeout, its cancellation or the lost bus, whichever comes first.
    private func finishCall(_ serial: UInt32, _ result: Result<DBusMessage, DBusError>) {
        guard let call = pendingCalls.removeValue(forKey: serial) else { return }
        call.timer.cancel()
        call.continuation.resume(returning: result)
    }

    private static func cancelled(_ member: String) -> DBusError {
        DBusError(name: DBusError.cancelledName, message: "\(member) was given up: the caller stopped waiting")
    }

    /// Calls waiting for a reply now (a test checks that none is left behind).
    public var waitingCallCount: Int { pendingCalls.count }

    // MARK: Signals

    /// Signals matching a rule, from the moment this returns (the rule is on the bus before it does). Ending the
    /// iteration removes the rule.
    public func signals(matching rule: MatchRule) async throws(DBusError) -> AsyncStream<DBusMessage> {
        try await signals(matchingAny: [rule])
    }

    /// Signals matching any of the rules, in the order the bus delivered them: one stream keeps, for example, a
    /// service's last signals ahead of the NameOwnerChanged that says it left.
    public func signals(matchingAny rules: [MatchRule]) async throws(DBusError) -> AsyncStream<DBusMessage> {
        for rule in rules {
            _ = try await call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "AddMatch", [.string(rule.text)])
        }
        let id = nextSubscriberID
        nextSubscriberID += 1
        let (stream, continuation) = AsyncStream<DBusMessage>.makeStream(bufferingPolicy: .bufferingNewest(65_536))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        subscribers[id] = Subscriber(rules: rules, continuation: continuation)
        return stream
    }

    private func unsubscribe(_ id: Int) async {
        guard let subscriber = subscribers.removeValue(forKey: id), isConnected else { return }
        for rule in subscriber.rules {
            _ = try? await call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "RemoveMatch", [.string(rule.text)])
        }
    }

    // MARK: Names

    /// Asks for a well-known name; fails if another connection owns it (no queueing).
    public func requestName(_ name: String) async throws(DBusError) {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string(name), .uint32(UInt32(cdbus_name_flag_do_not_queue))])
        let code = reply.first?.integer ?? 0
        guard
            code == Int64(cdbus_request_name_reply_primary_owner)
                || code == Int64(cdbus_request_name_reply_already_owner)
        else {
            throw DBusError(name: "org.freedesktop.DBus.Error.AddressInUse", message: "\(name) is already owned")
        }
    }

    /// Gives up a well-known name this connection owns (a recorder handing over to the next one).
    public func releaseName(_ name: String) async throws(DBusError) {
        _ = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReleaseName", [.string(name)])
    }

    /// The current owner's unique name of a well-known name, or nil when nobody owns it.
    public func nameOwner(_ name: String) async throws(DBusError) -> String? {
        do {
            let reply = try await call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "GetNameOwner", [.string(name)])
            return reply.first?.string
        } catch  where error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return nil
        }
    }

    /// The Unix user id of a connection on the bus (`GetConnectionUnixUser`), for deciding who may call.
    public func unixUser(of busName: String) async throws(DBusError) -> UInt32 {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixUser", [.string(busName)])
        guard let uid = reply.first?.integer, let value = UInt32(exactly: uid) else {
            throw DBusError(name: DBusError.failedName, message: "the bus did not say who \(busName) is")
        }
        return value
    }

    // MARK: Exported objects

    /// Serves interfaces on an object path, with the given initial property values.
    public func export(
        _ interfaces: [ExportedInterface], at path: String, properties: [String: [String: DBusValue]] = [:]
    ) throws(DBusError) {
        try NameValidation.validate(path, "object path", dbus_validate_path)
        objects[path] = Dictionary(interfaces.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        propertyValues[path] = properties
        if let root = managerRoot(above: path) {
            try send(
                .signal(
                    path: root, interface: Self.objectManager, member: "InterfacesAdded",
                    body: [.objectPath(path), interfacesAndProperties(of: path)]))
        }
    }

    public func unexport(_ path: String) {
        let interfaces = objects[path].map { Array($0.keys).sorted() }
        objects[path] = nil
        propertyValues[path] = nil
        if let interfaces, let root = managerRoot(above: path) {
            _ = try? send(
                .signal(
                    path: root, interface: Self.objectManager, member: "InterfacesRemoved",
                    body: [.objectPath(path), .strings(interfaces)]))
        }
    }

    static let objectManager = "org.freedesktop.DBus.ObjectManager"

    /// Serves `org.freedesktop.DBus.ObjectManager` at `root`: `GetManagedObjects` answers every object exported
    /// below it with its interfaces and their properties, and an object exported or withdrawn below it from now on
    /// is announced with `InterfacesAdded` / `InterfacesRemoved`. This is how bluetoothd reads a GATT application
    /// (BlueZ's doc/org.bluez.GattManager.rst).
    public func exportObjectManager(at root: String) throws(DBusError) {
        try NameValidation.validate(root, "object path", dbus_validate_path)
        managerRoots.insert(root)
    }

    /// The object manager whose subtree holds `path`, if any.
    private func managerRoot(above path: String) -> String? {
        managerRoots.first { root in path != root && path.hasPrefix(root == "/" ? "/" : root + "/") }
    }

    /// `a{sa{sv}}`: an exported object's interfaces, each with its properties.
    private func interfacesAndProperties(of path: String) -> DBusValue {
        let names = (objects[path].map { Array($0.keys) } ?? []).sorted()
        return .array(
            elementSignature: "{sa{sv}}",
            names.map { name in
                let values = propertyValues[path]?[name] ?? [:]
                return .dictEntry(
                    .string(name), .properties(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
            })
    }

    /// `a{oa{sa{sv}}}`: what `GetManagedObjects` at `root` answers.
    private func managedObjects(below root: String) -> DBusValue {
        let paths = objects.keys.filter { managerRoot(above: $0) == root }.sorted()
        return .array(
            elementSignature: "{oa{sa{sv}}}",
            paths.map { .dictEntry(.objectPath($0), interfacesAndProperties(of: $0)) })
    }

    /// Changes properties of an exported object and emits one `PropertiesChanged` with those that changed; with
    /// `announcingUnchanged`, with every value given, changed or not (a GATT characteristic's `Value`, which
    /// bluetoothd sends as a notification each time it is announced, even when the bytes are the same).
    public func setProperties(
        _ values: [String: DBusValue], interface: String, path: String, announcingUnchanged: Bool = false
    ) throws(DBusError) {
        var current = propertyValues[path]?[interface] ?? [:]
        var changed: [(String, DBusValue)] = []
        for (name, value) in values.sorted(by: { $0.key < $1.key })
        where announcingUnchanged || !Self.same(current[name], value) {
            current[name] = value
            changed.append((name, value))
        }
        propertyValues[path, default: [:]][interface] = current
        guard !changed.isEmpty else { return }
        try send(
            .signal(
                path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                body: [.string(interface), .properties(changed), .strings([])]))
    }

    /// Sets the properties `values` gives when the connection gets to it: callers that each set the newest values
    /// of a source that only moves forward can never put older values back over newer ones.
    public func setProperties(
        interface: String, path: String, _ values: @Sendable () -> [String: DBusValue]
    ) throws(DBusError) {
        try setProperties(values(), interface: interface, path: path)
    }

    /// Equality for change detection: a NaN (an unknown measurement) is the same as the NaN before it.
    private static func same(_ old: DBusValue?, _ new: DBusValue) -> Bool {
        if case .double(let a)? = old, case .double(let b) = new { return a.bitPattern == b.bitPattern }
        return old == new
    }

    private func answer(_ message: DBusMessage) {
        guard let path = message.path, let member = message.member else { return }
        let call = ExportedInterface.Call(sender: message.sender ?? "", path: path, body: message.body)
        let interfaces = objects[path]
        switch (message.interface, member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"), (nil, "Introspect"):
            reply(to: message, [.string(introspection(of: path))])
        case ("org.freedesktop.DBus.Peer", "Ping"), (nil, "Ping"):
            reply(to: message, [])
        case ("org.freedesktop.DBus.Properties", "Get"):
            guard interfaces != nil else { return replyUnknownObject(message) }
            let interface = message.body.first?.string ?? ""
            let name = message.body.dropFirst().first?.string ?? ""
            if let value = propertyValues[path]?[interface]?[name] {
                reply(to: message, [.variant(value)])
            } else {
                reply(
                    to: message,
                    error: DBusError(name: DBusError.unknownPropertyName, message: "no property \(interface).\(name)"))
            }
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            guard interfaces != nil else { return replyUnknownObject(message) }
            let interface = message.body.first?.string ?? ""
            let values = propertyValues[path]?[interface] ?? [:]
            reply(to: message, [.properties(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })])
        case ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects") where managerRoots.contains(path):
            reply(to: message, [managedObjects(below: path)])
        case ("org.freedesktop.DBus.Properties", "Set"):
            reply(
                to: message,
                error: DBusError(
                    name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "properties are read-only"))
        default:
            guard let interfaces else { return replyUnknownObject(message) }
            let candidates = message.interface.map { interfaces[$0].map { [$0] } ?? [] } ?? Array(interfaces.values)
            guard let method = candidates.lazy.compactMap({ $0.methods.first { $0.name == member } }).first else {
                reply(
                    to: message,
                    error: DBusError(
                        name: DBusError.unknownMethodName,
                        message: "no method \(message.interface.map { $0 + "." } ?? "")\(member) on \(path)"))
                return
            }
            let expected = method.inArguments.map(\.signature).joined()
            guard message.signature == expected else {
                reply(
                    to: message,
                    error: DBusError.invalid("\(member) takes (\(expected)), not (\(message.signature))"))
                return
            }
            // Tasks are created here in arrival order; a method served in arrival order waits for the one before.
            let queue = "\(path) \(member)"
            let previous = method.inArrivalOrder ? lastInArrivalOrder[queue] : nil
            let handling = Task {
                await previous?.value
                do throws(DBusError) {
                    let values = try await method.handler(call)
                    self.reply(to: message, values)
                } catch {
                    self.reply(to: message, error: error)
                }
            }
            if method.inArrivalOrder { lastInArrivalOrder[queue] = handling }
        }
    }

    private func replyUnknownObject(_ message: DBusMessage) {
        reply(
            to: message,
            error: DBusError(name: DBusError.unknownObjectName, message: "no object at \(message.path ?? "")"))
    }

    private func reply(to call: DBusMessage, _ values: [DBusValue]) {
        var reply = DBusMessage(kind: .methodReturn, destination: call.sender, body: values)
        reply.replySerial = call.serial
        _ = try? send(reply)
    }

    private func reply(to call: DBusMessage, error: DBusError) {
        var reply = DBusMessage(
            kind: .error, errorName: error.name, destination: call.sender, body: [.string(error.message)])
        reply.replySerial = call.serial
        _ = try? send(reply)
    }

    /// Answers a call whose arguments could not be read.
    private func reply(to rawCall: OpaquePointer, error: DBusError) {
        guard let reply = dbus_message_new_error(rawCall, error.name, error.message) else { return }
        defer { dbus_message_unref(reply) }
        dbus_connection_send(raw, reply, nil)
        dbus_connection_flush(raw)
    }

    private func introspection(of path: String) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        if let interfaces = objects[path] {
            xml += ExportedInterface.standardXML
            for name in interfaces.keys.sorted() { xml += interfaces[name]!.introspectionXML }
        }
        if managerRoots.contains(path) { xml += ExportedInterface.objectManagerXML }
        // Child nodes, so that tools such as `busctl tree` can walk down to the exported objects.
        let prefix = path == "/" ? "/" : path + "/"
        let children = Set(
            objects.keys.filter { $0.hasPrefix(prefix) && $0 != path }.compactMap {
                $0.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
            })
        for child in children.sorted() { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
