import DBus

/// A caller of the recorder's object over one bus connection: the CLI's control verbs and the mirror both ask
/// through it, so the method names, the argument types and the reading of the answers are written once.
public struct RecorderClient: Sendable {
    public let connection: DBusConnection

    public init(_ connection: DBusConnection) {
        self.connection = connection
    }

    /// The answer to `Control`: the state after it, the control sequence, and whether the request id had been
    /// answered before (the control was not applied again).
    public struct ControlAnswer: Sendable, Equatable {
        /// Nil for a word this version does not know.
        public var state: RecorderState?
        public var controlSequence: UInt64
        public var duplicate: Bool
    }

    /// Every property now (`GetAll`), answered within `timeout`.
    public func status(timeout: Duration = .seconds(25)) async throws(DBusError) -> RecorderStatus {
        let reply = try await connection.call(
            destination: RecorderControl.busName, path: RecorderControl.path,
            interface: "org.freedesktop.DBus.Properties", member: "GetAll", [.string(RecorderControl.interface)],
            timeout: timeout)
        return RecorderStatus(values: reply.first?.dictionary ?? [:])
    }

    /// One of the interface's methods (`Pause`, `Start`, `Marker`…) with its arguments; its answer.
    @discardableResult
    public func call(_ method: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25))
        async throws(DBusError) -> [DBusValue]
    {
        try await connection.call(
            destination: RecorderControl.busName, path: RecorderControl.path, interface: RecorderControl.interface,
            member: method, arguments, timeout: timeout)
    }

    /// `Control(requestId, command, expect, args)`: a control that is applied once however often it is sent with
    /// the same request id, and refused (`Stale`) when `expect` is not the recorder's control sequence (0: any).
    public func control(
        requestId: String, _ command: RecorderCommand, expect: UInt64, timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> ControlAnswer {
        let reply = try await call(
            "Control", Self.controlBody(requestId, command.name, expect, command.arguments), timeout: timeout)
        let sequence: UInt64 = if case .uint64(let value)? = reply.dropFirst().first { value } else { 0 }
        return ControlAnswer(
            state: reply.first?.string.flatMap(RecorderState.init(rawValue:)), controlSequence: sequence,
            duplicate: reply.dropFirst(2).first?.bool ?? false)
    }

    /// Sends `command`: by the interface's own method when it has one (its reply: `Start` answers the new ride's
    /// id), else by `Control` with `requestId` and `expect` (its reply: the state, the control sequence and whether
    /// the request was a duplicate).
    @discardableResult
    public func send(
        _ command: RecorderCommand, requestId: String, expect: UInt64 = 0, timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        if let method = command.method { return try await call(method.name, method.arguments, timeout: timeout) }
        return try await call(
            "Control", Self.controlBody(requestId, command.name, expect, command.arguments), timeout: timeout)
    }

    /// `Control`'s arguments in its order, `args` sorted by key.
    private static func controlBody(
        _ requestId: String, _ command: String, _ expect: UInt64, _ arguments: [String: DBusValue]
    ) -> [DBusValue] {
        [
            .string(requestId), .string(command), .uint64(expect),
            .properties(arguments.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
        ]
    }

    /// What a follower of the recorder listens to: its name changing owner, its properties changing, and its
    /// `Live`, `Event` and `HubSend` signals.
    public static let signalRules: [MatchRule] = [
        MatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            arg0: RecorderControl.busName),
        MatchRule(
            sender: RecorderControl.busName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            path: RecorderControl.path),
        MatchRule(
            sender: RecorderControl.busName, interface: RecorderControl.interface, member: "Live",
            path: RecorderControl.path),
        MatchRule(
            sender: RecorderControl.busName, interface: RecorderControl.interface, member: "Event",
            path: RecorderControl.path),
        MatchRule(
            sender: RecorderControl.busName, interface: RecorderControl.interface, member: "HubSend",
            path: RecorderControl.path),
    ]
}
