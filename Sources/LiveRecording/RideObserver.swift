import BlueZ
import Workouts

/// Told by the live recorder what its ride does, as it happens. `record --capture` keeps the HCI traffic of the
/// ride's connections (`HCICapture`, in SensorSetup) and `record --sync-trigger` rewrites a file after each saved
/// ride (`SavedRideSignal`, in RecorderService): the recorder links neither, it only tells them. Each call is
/// short and does not wait.
public protocol RideObserver: Sendable {
    /// The sensor at `address` is about to be connected.
    func addSensor(_ address: String)
    /// The connected sensor's characteristics, before it is subscribed to.
    func noteCharacteristics(_ characteristics: [GattCharacteristic], of address: String)
    /// The ride's journal events, as they are handed to the database.
    func note(_ events: [RideEvent])
    /// A ride was saved; what went wrong telling others about it, for the rider, or nil.
    func announce(_ summary: WorkoutSummary) -> String?
}

extension RideObserver {
    public func addSensor(_ address: String) {}
    public func noteCharacteristics(_ characteristics: [GattCharacteristic], of address: String) {}
    public func note(_ events: [RideEvent]) {}
    public func announce(_ summary: WorkoutSummary) -> String? { nil }
}
