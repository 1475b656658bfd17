import DBus
import Foundation
import RecorderInterface

/// What the mirror hears from the recorder, in the order the bus delivered it.
public enum RecorderUpdate: Sendable {
    /// A recorder owns the name now (it started, or the mirror just looked): every property.
    case appeared([String: DBusValue])
    /// `PropertiesChanged`: the properties that changed.
    case changed([String: DBusValue])
    /// `Live`: one notification's readings.
    case live([String: DBusValue])
    /// `Event`: one control applied to the ride.
    case event([String: DBusValue])
    /// Nobody owns the name (the recorder ended or crashed, or none was running).
    case gone
}

/// The mirror's side of the recorder's D-Bus object: follows it as it comes and goes and passes commands to
/// `Control`. Never calls anything else on the bus.
public actor RecorderLink {
    public let connection: DBusConnection
    public let bus: BusAddress

    private init(connection: DBusConnection, bus: BusAddress) {
        self.connection = connection
        self.bus = bus
    }

    public static func connect(to bus: BusAddress) async throws(DBusError) -> RecorderLink {
        RecorderLink(connection: try await DBusConnection.connect(to: bus), bus: bus)
    }

    /// Follows the recorder until the calling task is cancelled or the bus goes: a first `appeared` or `gone`,
    /// then everything that changes. The rules are on the bus before the first look, so nothing falls between.
    public func follow(_ update: @Sendable (RecorderUpdate) async -> Void) async throws(DBusError) {
        let name = RecorderControl.busName
        let signals = try await connection.signals(matchingAny: [
            MatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                arg0: name),
            MatchRule(
                sender: name, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                path: RecorderControl.path),
            MatchRule(sender: name, interface: RecorderControl.interface, member: "Live", path: RecorderControl.path),
            MatchRule(sender: name, interface: RecorderControl.interface, member: "Event", path: RecorderControl.path),
        ])
        await update(try await look())
        for await signal in signals {
            switch signal.member {
            case "NameOwnerChanged":
                // (name, old owner, new owner): a new owner is a new recorder; read it whole.
                let newOwner = signal.body.dropFirst(2).first?.string ?? ""
                await update(newOwner.isEmpty ? .gone : try await look())
            case "PropertiesChanged":
                guard signal.body.first?.string == RecorderControl.interface,
                    let changed = signal.body.dropFirst().first?.dictionary
                else { continue }
                await update(.changed(changed))
            case "Live":
                if let reading = signal.body.first?.dictionary { await update(.live(reading)) }
            case "Event":
                if let event = signal.body.first?.dictionary { await update(.event(event)) }
            default: continue
            }
        }
        // The signals end when the task is cancelled (the mirror stops) or when the bus closed the connection.
        guard Task.isCancelled else {
            throw DBusError(name: DBusError.disconnectedName, message: "\(bus) went away")
        }
    }

    /// Every property of the recorder now, or `gone`.
    private func look() async throws(DBusError) -> RecorderUpdate {
        do {
            let reply = try await connection.call(
                destination: RecorderControl.busName, path: RecorderControl.path,
                interface: "org.freedesktop.DBus.Properties", member: "GetAll", [.string(RecorderControl.interface)],
                timeout: .seconds(2))
            return .appeared(reply.first?.dictionary ?? [:])
        } catch  where RecorderControl.isMissing(error) {
            return .gone
        }
    }

    /// `Control(requestId, command, expect, args)`, answered within `timeout`.
    public func control(
        requestId: String, command: String, expect: UInt64, arguments: [String: DBusValue],
        timeout: Duration = .seconds(2)
    ) async throws(DBusError) -> (state: String, controlSequence: UInt64, duplicate: Bool) {
        let reply = try await connection.call(
            destination: RecorderControl.busName, path: RecorderControl.path, interface: RecorderControl.interface,
            member: "Control",
            [
                .string(requestId), .string(command), .uint64(expect),
                .properties(arguments.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
            ], timeout: timeout)
        let sequence: UInt64 = if case .uint64(let value)? = reply.dropFirst().first { value } else { 0 }
        return (reply.first?.string ?? "", sequence, reply.dropFirst(2).first?.bool ?? false)
    }
}
