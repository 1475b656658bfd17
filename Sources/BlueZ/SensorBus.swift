/// What the live recorder asks of the Bluetooth stack: the adapters and devices as last seen, the events in
/// order, and the calls that connect, read and subscribe. `BlueZClient` is the one the programs use; a test puts a
/// scripted stand-in in its place to run the recorder's scenarios without a bus or real time.
public protocol SensorBus: Actor {
    var adapters: [BluetoothAdapter] { get async }
    var devices: [BluetoothDevice] { get async }
    func device(_ path: String) async -> BluetoothDevice?
    func characteristics(ofDevice path: String) async -> [GattCharacteristic]
    /// Every change from now on, in the order it happened.
    func events() async -> AsyncStream<BlueZEvent>
    func powerOn(_ adapter: String) async throws(BlueZError)
    func startDiscovery(_ adapter: String, services: [UInt16]) async throws(BlueZError)
    func stopDiscovery(_ adapter: String) async throws(BlueZError)
    func connect(_ device: String) async throws(BlueZError)
    func disconnect(_ device: String) async throws(BlueZError)
    /// Whether the device's GATT objects are there (LE: ServicesResolved) within `timeout`.
    func waitForServices(_ device: String, timeout: Duration) async -> Bool
    func read(_ characteristic: GattCharacteristic) async throws(BlueZError) -> [UInt8]
    func write(_ characteristic: GattCharacteristic, _ value: [UInt8]) async throws(BlueZError)
    func startNotify(_ characteristic: GattCharacteristic) async throws(BlueZError)
    func stopNotify(_ characteristic: GattCharacteristic) async throws(BlueZError)
}

extension BlueZClient: SensorBus {}
