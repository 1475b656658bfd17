import BlueZ
import CyclingSensors
import LiveRecording
import RideWriting
import WorkoutStore

/// `calibrate`'s work on a power meter BlueZ has connected: zero offset through its control point (enhanced when
/// its features say so), and its crank length set and read back. Every answer is explained, stored with the
/// indication's bytes, and handed to the caller as it comes; what the meter kept is remembered.
public struct MeterCalibration: Sendable {
    public var zeroOffset = true
    /// Millimetres, in half millimetres (172.5).
    public var crankLengthMillimetres: Double?
    public var readCrankLength = false

    public init() {}

    /// What the caller shows, in order.
    public enum Report: Sendable {
        /// Something about the meter worth saying before its answers (a short feature, an operation it does not
        /// list).
        case note(String)
        case answer(Calibration)
        /// The meter answered but kept another crank length than the one sent.
        case keptOtherLength(kept: Double?, sent: Double)
    }

    /// Runs on the connected meter at `device`; false when it refused or changed any of it.
    public func run(
        _ bluez: BlueZClient, device: BluetoothDevice, name: String, store: WorkoutStore,
        report: (Report) -> Void
    ) async throws -> Bool {
        guard await bluez.waitForServices(device.path) else {
            throw LiveRecordingError(
                .controlPoint, "\(name) connected but did not show its services within 10 s; try again")
        }
        let control = try await PowerMeterControl.open(bluez, device: device.path, name: name)
        let features = control.features ?? []
        if let feature = control.feature, feature.sentOctets < 4 {
            // A Wahoo KICKR sends 2 octets: bits 16 to 31 (torque context, enhanced offset compensation) unknown.
            let unknown = [
                (CyclingPowerFeature.Features.torqueBasedMeasurementContext, "whether it measures torque or force"),
                (.enhancedOffsetCompensation, "whether it has enhanced offset compensation"),
            ].filter { !feature.knows($0.0) }.map(\.1)
            if !unknown.isEmpty {
                report(
                    .note(
                        "its Cycling Power Feature is short (\(feature.sentOctets) of 4 octets), so "
                            + unknown.joined(separator: " and ") + " is not known; the plain request is used"))
            }
        }
        var failed = false
        /// Sends one request, then explains, stores and reports the answer.
        func perform(_ operation: String, _ request: [UInt8]) async throws -> Calibration {
            let time = wallClockMicroseconds()
            var calibration: Calibration
            do {
                let response = try await control.send(request)
                let outcome = CyclingPowerControlPoint.outcome(
                    of: response.message, torqueBased: features.contains(.torqueBasedMeasurementContext))
                calibration = Calibration(
                    address: device.address, timeMicroseconds: time, operation: operation,
                    succeeded: outcome.succeeded, value: outcome.value, unit: outcome.unit,
                    explanation: outcome.explanation, response: response.bytes)
            } catch {
                calibration = Calibration(
                    address: device.address, timeMicroseconds: time, operation: operation, succeeded: false,
                    explanation: error.description)
            }
            failed = failed || !calibration.succeeded
            try store.addCalibration(calibration)
            report(.answer(calibration))
            return calibration
        }

        if zeroOffset {
            let enhanced = features.contains(.enhancedOffsetCompensation)
            if !enhanced && !features.contains(.offsetCompensation) {
                report(.note("its features do not list offset compensation; asking anyway"))
            }
            _ = try await perform(
                enhanced ? "enhancedOffsetCompensation" : "offsetCompensation",
                CyclingPowerControlPoint.request(
                    enhanced
                        ? CyclingPowerControlPoint.OpCode.startEnhancedOffsetCompensation
                        : CyclingPowerControlPoint.OpCode.startOffsetCompensation))
        }
        if let crankLength = crankLengthMillimetres {
            if !features.contains(.crankLengthAdjustment) {
                report(.note("its features do not list crank length adjustment; asking anyway"))
            }
            _ = try await perform(
                "setCrankLength", CyclingPowerControlPoint.setCrankLength(halfMillimetres: UInt16(crankLength * 2)))
        }
        if crankLengthMillimetres != nil || readCrankLength {
            let readBack = try await perform(
                "requestCrankLength",
                CyclingPowerControlPoint.request(CyclingPowerControlPoint.OpCode.requestCrankLength))
            if let crankLength = crankLengthMillimetres, readBack.succeeded {
                // What the meter kept is what counts: some round to whole millimetres or refuse silently.
                if readBack.value != crankLength {
                    failed = true
                    report(.keptOtherLength(kept: readBack.value, sent: crankLength))
                } else {
                    try store.rememberSensors([(address: device.address, name: name)], at: wallClockMicroseconds())
                    try store.updateKnownSensor(device.address, crankLengthMillimetres: .some(crankLength))
                }
            }
        }
        return !failed
    }
}
