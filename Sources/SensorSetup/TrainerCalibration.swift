import BlueZ
import CyclingSensors
import LiveRecording
import RideWriting
import WorkoutStore

/// `calibrate --trainer`: the FTMS spin down on a trainer BlueZ has connected (control point op 0x13, Fitness
/// Machine Status op 0x14; FTMS: Fitness Machine Control Point and Status). Control is asked for, the spin down started, the rider told the speed
/// to reach and when to stop pedalling as the trainer says so, and the trainer let go (Reset) however it ends. The
/// outcome is stored with the trainer's answer, like a power meter's calibration.
public struct TrainerCalibration: Sendable {
    /// How long the rider has to pedal up and coast down.
    public var spinDownTimeout: Duration = .seconds(180)

    public init() {}

    /// Runs on the connected trainer at `device`; false when it refused or the spin down failed. `say` gets each
    /// instruction and outcome in the rider's words, as they come.
    public func run(
        _ bluez: BlueZClient, device: BluetoothDevice, name: String, store: WorkoutStore,
        say: @escaping @Sendable (String) -> Void
    ) async throws -> Bool {
        guard await bluez.waitForServices(device.path) else {
            throw LiveRecordingError(
                .controlPoint, "\(name) connected but did not show its services within 10 s; try again")
        }
        let characteristics = await bluez.characteristics(ofDevice: device.path)
        func characteristic(_ uuid: Characteristic) -> GattCharacteristic? {
            characteristics.first { $0.shortUUID == uuid.rawValue }
        }
        guard let controlPoint = characteristic(.fitnessMachineControlPoint) else {
            throw LiveRecordingError(
                .controlPoint, "\(name) has no Fitness Machine Control Point: it cannot be calibrated over Bluetooth")
        }
        if let featureCharacteristic = characteristic(.fitnessMachineFeature),
            let value = try? await bluez.read(featureCharacteristic),
            let feature = try? FitnessMachineFeature(decoding: value), !feature.supports(.spinDown)
        {
            throw LiveRecordingError(
                .controlPoint,
                "\(name) does not spin down over Bluetooth (its features do not list Spin Down Control); "
                    + "calibrate it in its maker's app, or it calibrates itself")
        }
        let status = characteristic(.fitnessMachineStatus)
        do {
            try await bluez.startNotify(controlPoint)
            if let status { try await bluez.startNotify(status) }
        } catch {
            throw LiveRecordingError(
                .controlPoint, "\(name): cannot turn on its control point's indications: \(error.description)")
        }
        let time = wallClockMicroseconds()
        var outcome: (succeeded: Bool, explanation: String, response: [UInt8]?)
        do {
            outcome = try await spinDown(bluez, controlPoint, status: status, say: say)
        } catch {
            outcome = (false, error.description, nil)
        }
        // Never left holding a load, however the spin down ended.
        _ = try? await send(bluez, controlPoint, .reset, timeout: .seconds(2))
        try store.addCalibration(
            Calibration(
                address: device.address, timeMicroseconds: time, operation: "spinDown", succeeded: outcome.succeeded,
                explanation: outcome.explanation, response: outcome.response))
        say(outcome.explanation)
        return outcome.succeeded
    }

    private func spinDown(
        _ bluez: BlueZClient, _ controlPoint: GattCharacteristic, status: GattCharacteristic?,
        say: @escaping @Sendable (String) -> Void
    ) async throws(LiveRecordingError) -> (succeeded: Bool, explanation: String, response: [UInt8]?) {
        let control = try await send(bluez, controlPoint, .requestControl)
        if let refusal = refusal(control) { return (false, refusal, control) }
        // Status first: the trainer's spin-down status may follow its answer at once.
        let events = await bluez.events()
        let started = try await send(bluez, controlPoint, .spinDownControl(.start))
        if let refusal = refusal(started) { return (false, refusal, started) }
        let message = try? FitnessMachineControlPoint(decoding: started).message
        func speed(_ key: String) -> String? {
            guard case .integer(let hundredths)? = message?.parameter(key) else { return nil }
            return String(Double(hundredths) / 100)
        }
        if let low = speed("targetSpeedLow"), let high = speed("targetSpeedHigh") {
            say(
                "pedal up to above \(high) km/h and hold it; when told, stop pedalling and let the flywheel coast "
                    + "down through \(low) km/h")
        } else {
            say("pedal up to speed; when told, stop pedalling and let the flywheel coast")
        }
        guard let status else {
            return (true, "spin down started; this trainer reports no status, so its result is not known", started)
        }
        let statusPath = status.path
        // Spin Down Status (op 0x14): 1 requested, 2 success, 3 error, 4 stop pedalling.
        let result = await BlueZClient.first(of: events, within: spinDownTimeout) { event -> [UInt8]? in
            guard case .notification(let characteristic, let value) = event, characteristic.path == statusPath,
                value.count == 2, value[0] == FitnessMachineStatus.OpCode.spinDownStatus
            else { return nil }
            if value[1] == 0x04 { say("stop pedalling now: let the flywheel coast down") }
            return value[1] == 0x02 || value[1] == 0x03 ? value : nil
        }
        switch result?.last {
        case 0x02?: return (true, "spin down done: the trainer is calibrated", result)
        case 0x03?:
            return (
                false,
                "the spin down failed (the trainer said error): pedal steadily above the speed asked, then "
                    + "stop pedalling completely, and try again", result
            )
        default:
            return (
                false, "the spin down did not finish within \(Int(spinDownTimeout.components.seconds)) s; try again",
                nil
            )
        }
    }

    /// Why an answer `80 op result` is a refusal, in words; nil for a success.
    private func refusal(_ answer: [UInt8]) -> String? {
        guard answer.count >= 3 else { return "the trainer's answer is too short" }
        return FitnessMachineControlPoint.refusal(ControlPointResult(rawValue: answer[2]), to: answer[1])
    }

    private func send(
        _ bluez: BlueZClient, _ controlPoint: GattCharacteristic, _ request: FitnessMachineRequest,
        timeout: Duration = .seconds(5)
    ) async throws(LiveRecordingError) -> [UInt8] {
        try await ControlPointExchange.send(
            bluez, controlPoint, request.bytes, responseOpCode: 0x80, timeout: timeout,
            explainATTError: FitnessMachineControlPoint.explainATTError, device: "trainer",
            wake: "wake it (turn the pedals)")
    }
}

/// One control-point request through BlueZ and the answer its sensor indicates (`<response op> <request op>
/// <result> …`), for the power meter's and the trainer's calibrations alike.
enum ControlPointExchange {
    static func send(
        _ bluez: BlueZClient, _ controlPoint: GattCharacteristic, _ request: [UInt8], responseOpCode: UInt8,
        timeout: Duration, explainATTError: (UInt8) -> String, device: String, wake: String
    ) async throws(LiveRecordingError) -> [UInt8] {
        guard let opCode = request.first else {
            throw LiveRecordingError(.controlPoint, "an empty control-point request")
        }
        let events = await bluez.events()
        do {
            try await bluez.write(controlPoint, request)
        } catch {
            if let code = error.attErrorCode { throw LiveRecordingError(.controlPoint, explainATTError(code)) }
            throw LiveRecordingError(.bluetooth, error.description)
        }
        let path = controlPoint.path
        let response = await BlueZClient.first(of: events, within: timeout) { event -> [UInt8]? in
            // Anything else on the stream is not this answer.
            guard case .notification(let characteristic, let value) = event, characteristic.path == path,
                value.count >= 3, value[0] == responseOpCode, value[1] == opCode
            else { return nil }
            return value
        }
        guard let response else {
            throw LiveRecordingError(
                .controlPoint,
                "the \(device) did not answer within \(Int(timeout.components.seconds)) s; \(wake) and try again")
        }
        return response
    }
}
