import DBus
import Foundation

/// What a follower of the recorder (the mirror, the desktop item) hears from it, in the order the bus delivered it.
public enum RecorderUpdate: Sendable {
    /// A recorder owns the name now (it started, or the follower just looked): every property.
    case appeared(RecorderStatus)
    /// `PropertiesChanged`: the properties that changed.
    case changed([String: DBusValue])
    /// `Live`: one notification's readings.
    case live([String: DBusValue])
    /// `Event`: one control applied to the ride.
    case event([String: DBusValue])
    /// `HubSend`: a value the recorder tells the apps on the sensor hub, on one of the hub's characteristics.
    case hubSend(characteristic: UInt16, value: [UInt8])
    /// Nobody owns the name (the recorder ended or crashed, or none was running).
    case gone
}

/// A follower's side of the recorder's D-Bus object: reaches the bus (again and again, should it be missing or go
/// away), follows the recorder as it comes and goes, and passes commands to `Control`. Never calls anything else
/// on the bus. The mirror serves the history while this link waits for a bus; the desktop item says it waits.
public actor RecorderLink {
    public nonisolated let bus: BusAddress
    /// What the follower does while the bus cannot be reached, in words ("the ride history is served meanwhile").
    let meanwhile: String
    /// Whether the `Live` and `HubSend` signals (one per notification, and the hub's answers) are followed; a
    /// follower that shows only the properties does without them.
    let followsLive: Bool
    /// The connection while the bus is reachable.
    public private(set) var connection: DBusConnection?
    /// Why the bus cannot be reached now, in words; nil while it is.
    public private(set) var unreachable: String?
    /// How long between two attempts to reach a missing bus.
    let retryInterval: Duration

    public init(bus: BusAddress, meanwhile: String, followsLive: Bool = true, retryInterval: Duration = .seconds(5)) {
        self.bus = bus
        self.meanwhile = meanwhile
        self.followsLive = followsLive
        self.retryInterval = retryInterval
    }

    /// Reaches the bus and follows the recorder until the calling task is cancelled. Each time the bus is
    /// reached, `connected` runs first (the mirror exports its own object there); each time it cannot be
    /// reached, or goes away, `lost` is told why (once per reason) and the recorder is `gone` until it is back.
    public func run(
        connected: @Sendable (DBusConnection) async -> Void, lost: @Sendable (String) async -> Void,
        _ update: @Sendable (RecorderUpdate) async -> Void
    ) async {
        var lastReason: String?
        while !Task.isCancelled {
            do {
                let reached = try await DBusConnection.connect(to: bus)
                connection = reached
                unreachable = nil
                lastReason = nil
                await connected(reached)
                try await follow(on: reached, update)
                return
            } catch {
                connection = nil
                let reason = Self.advice(error, bus: bus, meanwhile: meanwhile)
                unreachable = reason
                await update(.gone)
                if reason != lastReason { await lost(reason) }
                lastReason = reason
            }
            try? await Task.sleep(for: retryInterval)
        }
    }

    /// What a rider reads when the bus cannot be reached: what is wrong and what to run.
    static func advice(_ error: DBusError, bus: BusAddress, meanwhile: String) -> String {
        let what =
            error.name == DBusError.disconnectedName
            ? "\(bus) went away" : "cannot reach \(bus) (\(error.message))"
        let remedy =
            switch bus {
            case .session:
                "\(meanwhile); a recorder started as the system service is followed with "
                    + "`--control-bus system`, one started by hand needs the same session bus as this program "
                    + "(log in with a desktop, install dbus-user-session and log in again, or start both from "
                    + "`dbus-run-session -- bash`)"
            case .system:
                "\(meanwhile); is dbus running (`systemctl status dbus`)?"
            case .address:
                meanwhile
            }
        return "\(what): \(remedy); trying again every few seconds"
    }

    /// Follows the recorder on one connection until the task is cancelled or the bus goes: a first `appeared` or
    /// `gone`, then everything that changes. The rules are on the bus before the first look, so nothing falls
    /// between.
    func follow(on connection: DBusConnection, _ update: @Sendable (RecorderUpdate) async -> Void)
        async throws(DBusError)
    {
        let rules = RecorderClient.signalRules.filter { followsLive || !["Live", "HubSend"].contains($0.member) }
        let signals = try await connection.signals(matchingAny: rules)
        await update(try await look(on: connection))
        for await signal in signals {
            switch signal.member {
            case "NameOwnerChanged":
                // (name, old owner, new owner): a new owner is a new recorder; read it whole.
                let newOwner = signal.body.dropFirst(2).first?.string ?? ""
                await update(newOwner.isEmpty ? .gone : try await look(on: connection))
            case "PropertiesChanged":
                guard signal.body.first?.string == RecorderControl.interface,
                    let changed = signal.body.dropFirst().first?.dictionary
                else { continue }
                await update(.changed(changed))
            case "Live":
                if let reading = signal.body.first?.dictionary { await update(.live(reading)) }
            case "Event":
                if let event = signal.body.first?.dictionary { await update(.event(event)) }
            case "HubSend":
                if let (characteristic, value) = RecorderControl.hubValue(signal.body) {
                    await update(.hubSend(characteristic: characteristic, value: value))
                }
            default: continue
            }
        }
        // The signals end when the task is cancelled (the follower stops) or when the bus closed the connection.
        guard Task.isCancelled else {
            throw DBusError(name: DBusError.disconnectedName, message: "\(bus) went away")
        }
    }

    /// Every property of the recorder now, or `gone`.
    private func look(on connection: DBusConnection) async throws(DBusError) -> RecorderUpdate {
        do {
            return .appeared(try await RecorderClient(connection).status(timeout: .seconds(2)))
        } catch  where RecorderControl.isMissing(error) {
            return .gone
        }
    }

    /// A hub app's arrival, write or leaving passed to the recorder (`HubAppJoined`, `HubAppWrote`, `HubAppLeft`):
    /// the method's answer; fails while the bus cannot be reached.
    @discardableResult
    public func hub(_ method: String, _ arguments: [DBusValue], timeout: Duration = .seconds(2))
        async throws(DBusError) -> [DBusValue]
    {
        guard let connection else {
            throw DBusError(name: DBusError.disconnectedName, message: unreachable ?? "\(bus) cannot be reached")
        }
        return try await RecorderClient(connection).call(method, arguments, timeout: timeout)
    }

    /// `Control(requestId, command, expect, args)`, answered within `timeout`.
    public func control(
        requestId: String, _ command: RecorderCommand, expect: UInt64, timeout: Duration = .seconds(2)
    ) async throws(DBusError) -> RecorderClient.ControlAnswer {
        guard let connection else {
            throw DBusError(name: DBusError.disconnectedName, message: unreachable ?? "\(bus) cannot be reached")
        }
        return try await RecorderClient(connection).control(
            requestId: requestId, command, expect: expect, timeout: timeout)
    }
}
