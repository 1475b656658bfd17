import TrainerControl

/// What the recorder tells the apps on the sensor hub (`record --bridge`), through `LiveRecorder.toApps`, in order.
public enum HubMessage: Sendable, Equatable {
    /// Indicate this on the hub's Fitness Machine control point: the answer to an app's request.
    case controlPointAnswer([UInt8])
    /// Notify this on the hub's Fitness Machine Status (Control Permission Lost when the rider takes the trainer
    /// back).
    case machineStatus([UInt8])
    /// The real trainer behind the hub declared this once connected: what the hub's Fitness Machine offers apps.
    case trainerDeclared(TrainerCapabilities)
}
