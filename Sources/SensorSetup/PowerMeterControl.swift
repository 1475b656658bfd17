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
        let response = try await ControlPointExchange.send(
            bluez, controlPoint, request, responseOpCode: 0x20, timeout: timeout,
            explainATTError: CyclingPowerControlPoint.explainATTError, device: "meter",
            wake: "wake it (turn the cranks)")
        do {
            return (try CyclingPowerControlPoint(decoding: response).message, response)
        } catch {
            let hex = response.map { String(format: "%02X", $0) }.joined(separator: " ")
            throw LiveRecordingError(.controlPoint, "the meter's answer \(hex) is malformed: \(error)")
        }
    }
}
