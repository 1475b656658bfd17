import BlueZ
import LiveRecording

/// Finding cycling sensors through one adapter: the one way `scan`, `calibrate` and `doctor` look for them (the
/// recorder keeps discovery on while it waits, with the same filter and the same adapter rule).
public struct SensorSearch: Sendable {
    public let bluez: BlueZClient
    public let adapter: BluetoothAdapter

    /// The adapter named by `adapterName` (`hci1` or its address; the first one without a name), powered on when
    /// `poweringOn` (doctor only looks).
    public static func open(
        _ bluez: BlueZClient, adapterName: String?, poweringOn: Bool = true
    ) async throws -> SensorSearch {
        let adapter = try LiveRecorder.chooseAdapter(await bluez.adapters, named: adapterName)
        if poweringOn && !adapter.powered { try await bluez.powerOn(adapter.path) }
        return SensorSearch(bluez: bluez, adapter: adapter)
    }

    /// The devices BlueZ lists through this adapter: another adapter of the same machine may see the same sensor,
    /// or this adapter itself as a device.
    public var devices: [BluetoothDevice] {
        get async { await bluez.devices.filter { $0.adapterPath == adapter.path } }
    }

    /// Scans for `duration` with the discovery filter on `services`, then stops; the cycling sensors seen.
    public func scan(for duration: Duration, services: [UInt16] = LiveRecorder.services) async throws
        -> [BluetoothDevice]
    {
        try await bluez.startDiscovery(adapter.path, services: services)
        try? await Task.sleep(for: duration)
        try? await bluez.stopDiscovery(adapter.path)
        return LiveRecorder.cyclingSensors(await bluez.devices, through: adapter.path)
    }

    /// A sensor by address or name: one BlueZ knows already, else the first that a scan on `services` shows
    /// within `timeout` (woken by BlueZ's signals); nil when none did.
    public func find(
        _ wanted: String, within timeout: Duration, services: [UInt16] = LiveRecorder.services
    ) async -> BluetoothDevice? {
        let adapterPath = adapter.path
        let isWanted: @Sendable (BluetoothDevice) -> Bool = { $0.adapterPath == adapterPath && $0.isCalled(wanted) }
        if let known = await bluez.devices.first(where: isWanted) { return known }
        try? await bluez.startDiscovery(adapterPath, services: services)
        let found = await bluez.waitForDevice(timeout: timeout, where: isWanted)
        try? await bluez.stopDiscovery(adapterPath)
        return found
    }
}
