import DBus
import Formats
import Foundation
import RecorderInterface
import Workouts

/// What the mirror knows of the ride, and the screens it tells: the recorder's properties as the API's snapshot,
/// the control events of the last 1024 with their ids, and every open stream. Each screen is written only what
/// its device was granted (`DataAccess`): a type not granted is absent from its snapshots, status, readings and
/// events, and a change of grant sends it a fresh snapshot at once.
///
/// Event ids are `BOOT.SEQ`: BOOT names the recorder the mirror follows (new each time one appears or goes), SEQ
/// counts its events from 1. A screen that reconnects with the id of the last event it saw gets the ones it
/// missed, then a fresh snapshot; with an unknown id, or after the recorder restarted, only the snapshot.
public actor MirrorHub {
    public static let ringCapacity = 1024

    /// The recorder's properties, nil while none is on the bus.
    private var recorderStatus: RecorderStatus?
    private var boot = MirrorHub.newBoot()
    private var ring: [(sequence: Int, message: String, type: DataType?)] = []
    private var lastSequence = 0
    /// The power of the newest `Live` reading that carried one (the 3-s figure is the recorder's `PowerWatts`).
    private var instantaneousPowerWatts: Double?
    /// Properties changed since the last `status` message (sent at most every 500 ms).
    private var changed: Set<String> = []
    private var clients: [Int: StreamClient] = [:]
    /// The grants changed while the mirror runs, by device: a stream whose request read the device just before
    /// its grant changed opens with the new one.
    private var grants: [String: Set<DataType>] = [:]
    private var nextClientID = 1
    public let maximumClients: Int

    public init(maximumClients: Int = 16) {
        self.maximumClients = maximumClients
    }

    private static func newBoot() -> String {
        String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
    }

    /// Whether a recorder is on the bus.
    public var recorderPresent: Bool { recorderStatus != nil }

    /// The current workout id (0 when none) and control sequence, which a control's `workoutId` and `expect`
    /// are checked against.
    public var current: (workoutId: Int64, controlSequence: UInt64) {
        (recorderStatus?.workoutId ?? 0, recorderStatus?.controlSequence ?? 0)
    }

    /// The action the recorder offers to undo now: its number (0: none) and the type undoing it needs.
    public var undoOffer: (id: Int64, type: DataType?) {
        (recorderStatus?.undoId ?? 0, recorderStatus.flatMap { DataType(rawValue: $0.undoType) })
    }

    // MARK: What the recorder says

    public func apply(_ update: RecorderUpdate) {
        switch update {
        case .appeared(let values):
            recorderStatus = values
            restart()
        case .gone:
            recorderStatus = nil
            restart()
        case .changed(let values):
            guard recorderStatus != nil else { return }
            changed.formUnion(recorderStatus?.apply(values) ?? [])
        case .live(let reading):
            // Only the ride's source of power (`shown`, by the source priority) is the power shown now: a trainer's
            // second opinion beside a meter is not.
            let shown = reading["shown"]?.unwrapped.stringArray
            if case .double(let watts)? = reading["powerWatts"]?.unwrapped, shown?.contains("powerWatts") ?? true {
                instantaneousPowerWatts = watts
            }
            // One message per set of types granted among the screens (most often one or two).
            var rendered: [Set<DataType>: String] = [:]
            var withheld: Set<Set<DataType>> = []
            for client in clients.values {
                let types = client.types
                if withheld.contains(types) { continue }
                if let message = rendered[types] {
                    client.pushLive(message)
                } else if let kept = DataAccess.reading(reading, for: types) {
                    let message = Self.message("live", RecorderControl.json(kept))
                    rendered[types] = message
                    client.pushLive(message)
                } else {
                    withheld.insert(types)
                }
            }
        case .hubSend:
            // For the DirCon hub beside the screens (`DirConHub`), not for them.
            break
        case .event(let event):
            lastSequence += 1
            let id = "\(boot).\(lastSequence)"
            let message = Self.message("event", Self.eventJSON(event), id: id)
            let type = DataAccess.type(ofEvent: event)
            ring.append((lastSequence, message, type))
            if ring.count > Self.ringCapacity { ring.removeFirst(ring.count - Self.ringCapacity) }
            for client in clients.values where type.map(client.types.contains) ?? true { client.push(message) }
        }
    }

    /// A device's grant changed: its open streams are written for `types` from now on, beginning with a snapshot
    /// that holds only those.
    public func grant(device: String, types: Set<DataType>) {
        grants[device] = types
        for client in clients.values where client.device == device {
            client.types = types
            client.push(snapshotMessage(types))
        }
    }

    /// A different recorder (or none): nothing said of the previous one applies; every screen starts afresh.
    private func restart() {
        boot = Self.newBoot()
        ring.removeAll()
        lastSequence = 0
        instantaneousPowerWatts = nil
        changed.removeAll()
        for client in clients.values { client.push(snapshotMessage(client.types)) }
    }

    /// Every 500 ms: the properties that changed as one `status` message, and a snapshot to the screens that lost
    /// `live` values.
    public func flushStatus() {
        let keys = Set(changed.map(Self.apiKey))
        changed.removeAll()
        // Each message is made once per set of types granted among the screens.
        var statuses: [Set<DataType>: String?] = [:]
        var snapshots: [Set<DataType>: String] = [:]
        for client in clients.values {
            let types = client.types
            if client.takeOwedSnapshot() {
                let snapshot = snapshots[types] ?? snapshotMessage(types)
                snapshots[types] = snapshot
                client.push(snapshot)
                continue
            }
            guard let recorderStatus, !keys.isEmpty else { continue }
            let status =
                statuses[types]
                ?? {
                    let fields = Self.fields(recorderStatus, instantaneousPowerWatts: instantaneousPowerWatts, types)
                        .filter { keys.contains($0.0) }
                    return fields.isEmpty ? nil : Self.message("status", .object(fields))
                }()
            statuses[types] = status
            if let status { client.push(status) }
        }
    }

    /// A comment line every 15 s keeps proxies and phones from closing an idle stream (and finds dead sockets).
    public func keepAlive() {
        for client in clients.values { client.push(": keep-alive\n\n") }
    }

    // MARK: Screens

    /// Opens a stream for a device: the events missed since `lastEventID` (when it names this recorder's ring),
    /// then a snapshot. Nil when `maximumClients` streams are open.
    public func subscribe(device: String, types asRead: Set<DataType>, lastEventID: String?) -> StreamClient? {
        guard clients.count < maximumClients else { return nil }
        let types = grants[device] ?? asRead
        let client = StreamClient(id: nextClientID, device: device, types: types)
        nextClientID += 1
        clients[client.id] = client
        if let missed = missedEvents(since: lastEventID) {
            for event in missed where event.type.map(types.contains) ?? true { client.push(event.message) }
        }
        // `retry`: a browser whose stream broke asks again after 1 s, not its default 3 s.
        client.push("retry: 1000\n" + snapshotMessage(types))
        return client
    }

    public func unsubscribe(_ client: StreamClient) {
        clients[client.id] = nil
        client.close()
    }

    /// Closes the streams of the devices whose token hashes are given (a revoked device).
    public func close(devices: Set<String>) {
        for client in clients.values where devices.contains(client.device) { unsubscribe(client) }
    }

    public func closeAll() {
        for client in clients.values { unsubscribe(client) }
    }

    public var clientCount: Int { clients.count }

    /// The events after `id`, when `id` is `BOOT.SEQ` of this recorder and none after it has left the ring.
    private func missedEvents(since id: String?) -> [(message: String, type: DataType?)]? {
        guard let id, let dot = id.lastIndex(of: "."), id[..<dot] == boot,
            let sequence = Int(id[id.index(after: dot)...]), sequence <= lastSequence,
            sequence >= (ring.first?.sequence ?? lastSequence + 1) - 1
        else { return nil }
        return ring.filter { $0.sequence > sequence }.map { ($0.message, $0.type) }
    }

    // MARK: JSON

    /// `GET /api/v1/status` for a device granted `types`: nil while no recorder is on the bus.
    public func status(_ types: Set<DataType>) -> JSONValue? {
        recorderStatus.map { .object(Self.fields($0, instantaneousPowerWatts: instantaneousPowerWatts, types)) }
    }

    /// The snapshot for a device granted `types`, with `recorder` saying whether one is on the bus (every other
    /// value null when not) and `types` what the device was granted (the page shows only those controls).
    private func snapshotMessage(_ types: Set<DataType>) -> String {
        let fields = Self.fields(recorderStatus, instantaneousPowerWatts: instantaneousPowerWatts, types)
        return Self.message(
            "snapshot",
            .object(
                [("recorder", .bool(recorderStatus != nil))] + fields
                    + [("types", .array(types.sorted().map { .string($0.rawValue) }))]),
            id: "\(boot).\(lastSequence)")
    }

    /// The API's key of a property: `PowerWatts` → `powerWatts`, every `Can…` → `can`.
    static func apiKey(_ property: String) -> String {
        property.hasPrefix("Can") ? "can" : property.prefix(1).lowercased() + property.dropFirst()
    }

    /// One field of the snapshot.
    enum SnapshotField: Equatable {
        /// A recorder property, under its API key.
        case property(String)
        /// The six `Can…` properties, as one object.
        case can
        /// The latest power reading, the mirror's own (from `Live`).
        case instantaneousPower
    }

    /// The snapshot's fields in the order Docs/reference/http-api.md gives them: every property of
    /// `RecorderStatus.properties` once (a test holds the two lists together), and the mirror's own reading.
    static let snapshot: [SnapshotField] =
        [
            "State", "WorkoutId", "Name", "Location", "Goal", "GoalProgress", "ElapsedSeconds", "MovingSeconds",
            "PowerWatts",
        ]
        .map(SnapshotField.property) + [.instantaneousPower]
        + [
            "CadenceRPM", "SpeedMetersPerSecond", "HeartRateBPM", "DistanceMeters", "WorkJoules", "Lap",
            "LapElapsedSeconds", "WaterMillilitres", "ControlSequence",
        ].map(SnapshotField.property) + [.can]
        + [
            "Sensors", "SuggestedWorkouts", "TrainerMode", "TrainerState", "TargetPowerWatts", "GradePercent",
            "ResistanceLevel", "PowerMatchOffsetWatts", "TrainerMessage", "TrainerHolder", "HubApps", "WorkoutPlanId",
            "WorkoutPlanName",
            "StepIndex", "StepCount", "StepSecondsLeft", "StepName", "TargetRangeLowWatts", "TargetRangeHighWatts",
            "NextTargetPowerWatts", "IntensityPercent", "WorkoutProfile", "UndoId", "UndoAction", "UndoType",
            "UndoSecondsLeft",
        ].map(SnapshotField.property)

    /// The snapshot's fields in the documented order, those of a type not in `types` left out. Unknown values (NaN,
    /// an empty name, no workout) are null, and every value is null while no recorder is on the bus (`status` nil).
    static func fields(_ status: RecorderStatus?, instantaneousPowerWatts: Double?, _ types: Set<DataType>)
        -> [(String, JSONValue)]
    {
        func value(_ name: String) -> JSONValue {
            switch status?.json(name) ?? .null {
            case .string(let text) where text.isEmpty: .null
            case .integer(0) where ["WorkoutId", "StepCount", "IntensityPercent", "UndoId"].contains(name): .null
            case .integer(-1) where name == "StepIndex": .null
            case let other: other
            }
        }
        return snapshot.compactMap { field in
            switch field {
            case .property(let name) where DataAccess.type(ofProperty: name).map(types.contains) == false: nil
            case .instantaneousPower where !types.contains(.power): nil
            case .property(let name): (apiKey(name), value(name))
            case .instantaneousPower:
                ("instantaneousPowerWatts", status == nil ? .null : JSONValue.rounded(instantaneousPowerWatts))
            case .can:
                (
                    "can",
                    status.map { status in
                        let can = status.can
                        return .object([
                            ("start", .bool(can.start)), ("pause", .bool(can.pause)), ("resume", .bool(can.resume)),
                            ("lap", .bool(can.lap)), ("end", .bool(can.end)), ("cancel", .bool(can.cancel)),
                        ])
                    } ?? .null
                )
            }
        }
    }

    /// An `Event` signal as the stream's `event`: `kind`, `time` (ISO 8601, UTC), `workoutId`, `controlSequence`
    /// and the control's own fields.
    static func eventJSON(_ event: [String: DBusValue]) -> JSONValue {
        var fields: [(String, JSONValue)] = [("kind", RecorderControl.json("kind", event["kind"]))]
        if let micros = event["timeMicros"]?.integer {
            // As `show --json` writes an event's time (and without Foundation's formatter, which loads ICU's
            // calendar data: megabytes of the mirror's memory).
            fields.append(("time", .string(UTCTime.format(microseconds: micros))))
        }
        for key in ["workoutId", "controlSequence"] { fields.append((key, RecorderControl.json(key, event[key]))) }
        let own = Set(["kind", "timeMicros", "workoutId", "controlSequence"])
        for (key, value) in event.sorted(by: { $0.key < $1.key }) where !own.contains(key) {
            fields.append((key, RecorderControl.json(key, value)))
        }
        return .object(fields)
    }

    /// One Server-Sent Events message (the JSON is one line, so one `data:` field).
    static func message(_ event: String, _ data: JSONValue, id: String? = nil) -> String {
        (id.map { "id: \($0)\n" } ?? "") + "event: \(event)\ndata: \(data.rendered())\n\n"
    }
}
