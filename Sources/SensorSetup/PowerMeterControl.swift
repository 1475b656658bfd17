import BlueZ
import CyclingSensors
import Foundation
import LiveRecording

/// One power meter's Cycling Power Control Point, through BlueZ: indications on through StartNotify (BlueZ
/// writes the CCCD), a request written with a Write Request, then the indicated response, one at a time.
public struct PowerMeterControl: Sendable {
    public let bluez: BlueZClient
    public let controlPoint: GattCharacteristic
    /// Cycling Power Feature as read on opening (nil when the meter has none to read).
    public let feature: CyclingPowerFeature?
    /// Its feature bits (a short field's unsent bits read as clear: ask `feature.knows` first).
    public var features: CyclingPowerFeature.Features? { feature?.features }

    /// The control point of a connected device; fails in words when the meter has none.
    public static func open(_ bluez: BlueZClient, device: String, name: String) async throws(LiveRecordingError)
        -> PowerMeterControl
    {
        let characteristics = await bluez.characteristics(ofDevice: device)
        guard let controlPoint = characteristics.first(where: { $0.shortUUID == 0x2A66 }) else {
            throw LiveRecordingError(
                .controlPoint,
                "\(name) has no Cycling Power Control Point: it cannot be calibrated or set over Bluetooth")
        }
        var feature: CyclingPowerFeature?
        if let characteristic = characteristics.first(where: { $0.shortUUID == 0x2A65 && $0.canRead }),
            let value = try? await bluez.read(characteristic)
        {
            feature = try? CyclingPowerFeature(decoding: value)
        }
        do {
            try await bluez.startNotify(controlPoint)
        } catch {
            throw LiveRecordingError(
                .controlPoint, "\(name): cannot turn on its control point's indications: \(error.description)")
        }
        return PowerMeterControl(bluez: bluez, controlPoint: controlPoint, feature: feature)
    }

    /// Writes `request` and returns the response the meter indicates for it, decoded and as it came (CPS
    /// allows it 30 s).
    public func send(_ request: [UInt8], timeout: Duration = .seconds(30)) async throws(LiveRecordingError)
        -> (message: ControlPointMessage, bytes: [UInt8])
    {
        guard let opCode = request.first else {
            throw LiveRecordingError(.controlPoint, "an empty control-point request")
        }
        let events = await bluez.events()
        do {
            try await bluez.write(controlPoint, request)
        } catch {
            if let code = error.attErrorCode {
                throw LiveRecordingError(.controlPoint, CyclingPowerControlPoint.explainATTError(code))
            }
            throw LiveRecordingError(.bluetooth, error.description)
        }
        let path = controlPoint.path
        let response = await BlueZClient.first(of: events, within: timeout) { event -> [UInt8]? in
            // The response is `20 <request op code> <result> …`; anything else on the stream is not it.
            guard case .notification(let characteristic, let value) = event, characteristic.path == path,
                value.count >= 3, value[0] == 0x20, value[1] == opCode
            else { return nil }
            return value
        }
        guard let response else {
            throw LiveRecordingError(
                .controlPoint,
                "the meter did not answer within \(Int(timeout.components.seconds)) s; wake it (turn the cranks) and try again"
            )
        }
        do {
            return (try CyclingPowerControlPoint(decoding: response).message, response)
        } catch {
            let hex = response.map { String(format: "%02X", $0) }.joined(separator: " ")
            throw LiveRecordingError(.controlPoint, "the meter's answer \(hex) is malformed: \(error)")
        }
    }
}
