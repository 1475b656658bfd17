import CyclingSensors
import TrainerControl

/// What the hub's Fitness Machine service says of itself to an app (its read characteristics), made from what the
/// real trainer behind it declares: an app is offered no target the hub would only refuse, and a power range the
/// trainer can hold.
public enum HubDeclaration {
    /// The Fitness Machine Features bits the hub's Indoor Bike Data carries: cadence (1), heart rate (10) and
    /// power (14), the fused values (`HubBroadcast`).
    static let machineFeatures: UInt32 = 1 << 1 | 1 << 10 | 1 << 14

    /// The targets `AppControl` passes through.
    static let passedTargets: [FitnessMachineFeature.TargetSetting] = [.power, .resistance, .indoorBikeSimulation]

    /// Fitness Machine Feature (0x2ACC): what the Indoor Bike Data carries, and of power, resistance and simulation
    /// targets those the real trainer declares it takes (a spin-down is the rider's `cyclelog calibrate`, never an
    /// app's).
    public static func fitnessMachineFeature(of trainer: TrainerCapabilities) -> FitnessMachineFeature {
        FitnessMachineFeature(
            fitnessMachineFeatures: machineFeatures,
            targets: passedTargets.filter { trainer.features?.supports($0) ?? false })
    }

    /// Fitness Machine Feature (0x2ACC) of a hub that passes no control through: what its Indoor Bike Data
    /// carries, and no target.
    public static let fitnessMachineFeatureWithoutControl = FitnessMachineFeature(
        fitnessMachineFeatures: machineFeatures, targets: [])

    /// Supported Power Range (0x2AD8): the real trainer's own, within which the trainer control holds every
    /// target (the widest a home trainer is sold with when it declares none).
    public static func supportedPowerRange(of trainer: TrainerCapabilities) -> SupportedRange {
        trainer.powerRange ?? TrainerCapabilities.assumedPowerRange
    }

    /// Supported Resistance Level Range (0x2AD6): the hub's own levels, 0 to 25.5 in steps of 0.1, each that
    /// share of the real trainer's range (`AppControl`).
    public static let supportedResistanceLevelRange = SupportedRange(
        minimum: Int16(AppControl.resistanceLevelTenths.lowerBound),
        maximum: Int16(AppControl.resistanceLevelTenths.upperBound), minimumIncrement: 1)
}
