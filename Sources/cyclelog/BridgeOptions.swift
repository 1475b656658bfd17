import ArgumentParser
import BlueZ
import DBus
import HubBridge
import LiveRecording

/// `record --bridge`: the box by the trainer as a sensor hub (the recording guide, "Ride in an app through the hub").
struct BridgeOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Re-broadcast the ride's sensors over Bluetooth as one power meter, speed/cadence sensor, heart-rate strap "
                + "and Fitness Machine, for the app you ride in.",
            discussion: "The app sees the fused values: the power meter's power, the crank's cadence. It advertises "
                + "on an adapter of its own (--bridge-adapter)."))
    var bridge = false

    @Option(
        help: ArgumentHelp(
            "The Bluetooth adapter the hub advertises on, by name (hci1) or address (default: one that is not "
                + "--adapter).", valueName: "adapter"))
    var bridgeAdapter: String?

    @Option(help: ArgumentHelp("The name apps list for the hub (at most 16 bytes).", valueName: "name"))
    var bridgeName: String = HubBridge.defaultName

    func validate() throws {
        // Flags (3 bytes), the four services' 16-bit UUIDs (10) and the name's own 2 leave 16 of an advertisement's 31.
        guard bridgeName.utf8.count <= 16, !bridgeName.isEmpty else {
            throw ValidationError(
                "--bridge-name takes 1 to 16 bytes (what fits an advertisement beside the four services), "
                    + "not '\(bridgeName)' (\(bridgeName.utf8.count) bytes)")
        }
    }

    /// Whether the hub options mean anything to a recorder that takes Starts (`takesStarts`) or not.
    func validate(takesStarts: Bool) throws {
        if !bridge && !takesStarts && (bridgeAdapter != nil || bridgeName != HubBridge.defaultName) {
            throw ValidationError(
                "--bridge-adapter and --bridge-name go with --bridge, or with --wait or --auto (for the rides whose "
                    + "start asks for the hub: `cyclelog start --hub`)")
        }
    }

    /// The hub for the whole recording (--bridge), or nil. Fails in words when there is no adapter for it.
    func hub(bus: BusAddress, bluez: BlueZClient, recordingAdapter: String?) async throws -> HubBridge? {
        guard bridge else { return nil }
        return try await make(bus: bus, bluez: bluez, recordingAdapter: recordingAdapter)
    }

    /// How the hub runs beside a recorder without --bridge: for the rides whose Start asks for it when the recorder
    /// takes Starts and there is an adapter for it, else not at all (a Start's hub=true is refused in these words).
    func choice(takesStarts: Bool, bluez: BlueZClient, recordingAdapter: String?) async -> LiveRecorder.HubChoice {
        guard takesStarts else {
            return .none("this recording takes no starts")
        }
        do {
            _ = try await adapter(bluez: bluez, recordingAdapter: recordingAdapter)
            return .onStart
        } catch {
            return .none("this recorder has no sensor hub: \(error.description)")
        }
    }

    /// The adapter the hub advertises on, beside the recording's. Fails in words when there is none.
    private func adapter(bluez: BlueZClient, recordingAdapter: String?) async throws(LiveRecordingError)
        -> BluetoothAdapter
    {
        let adapters = await bluez.adapters
        let recording = try LiveRecorder.chooseAdapter(adapters, named: recordingAdapter)
        return try HubBridge.chooseAdapter(adapters, named: bridgeAdapter, recordingOn: recording.path)
    }

    /// The hub on its adapter (powered on if it is not), on a bus connection of its own. Fails in words when there
    /// is no adapter for it.
    func make(bus: BusAddress, bluez: BlueZClient, recordingAdapter: String?) async throws -> HubBridge {
        let adapter = try await adapter(bluez: bluez, recordingAdapter: recordingAdapter)
        if !adapter.powered { try await bluez.powerOn(adapter.path) }
        return HubBridge(
            connection: try await DBusConnection.connect(to: bus), adapter: adapter, name: bridgeName,
            passingControl: true)
    }
}
