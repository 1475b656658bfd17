import CyclingSensors
import SensorHub
import TrainerControl

/// What the recorder tells the apps on the sensor hub (`record --bridge`), through `LiveRecorder.toApps`, in order.
public enum HubMessage: Sendable, Equatable {
    /// Notify these: what one reading changes (`HubOutput`), in the order made. `overDirCon`: an app is connected
    /// over DirCon, whose hub (in the mirror) hears them as `HubSend` signals; the recorder sends them on the bus
    /// only then.
    case readings([HubBroadcast.Notification], overDirCon: Bool)
    /// Indicate this on the hub's Fitness Machine control point: the answer to an app's request.
    case controlPointAnswer([UInt8])
    /// Notify this on the hub's Fitness Machine Status (Control Permission Lost when the rider takes the trainer
    /// back).
    case machineStatus([UInt8])
    /// The real trainer behind the hub declared this once connected: what the hub's Fitness Machine offers apps.
    case trainerDeclared(TrainerCapabilities)

    /// The hub's characteristics this message sets, in order, whatever carries them to the apps (an indication or
    /// a notification on Bluetooth, a DirCon notification): the control point's answer, the status, or what the
    /// Fitness Machine declares from then on (its Feature and Supported Power Range).
    public var characteristicValues: [(characteristic: UInt16, value: [UInt8])] {
        switch self {
        case .readings(let notifications, _): notifications.map { ($0.characteristic.rawValue, $0.value) }
        case .controlPointAnswer(let bytes): [(Characteristic.fitnessMachineControlPoint.rawValue, bytes)]
        case .machineStatus(let bytes): [(Characteristic.fitnessMachineStatus.rawValue, bytes)]
        case .trainerDeclared(let capabilities):
            [
                (
                    Characteristic.fitnessMachineFeature.rawValue,
                    HubDeclaration.fitnessMachineFeature(of: capabilities).encoded()
                ),
                (
                    Characteristic.supportedPowerRange.rawValue,
                    HubDeclaration.supportedPowerRange(of: capabilities).encoded()
                ),
            ]
        }
    }
}
