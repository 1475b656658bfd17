import Foundation
import Workouts
import XCTest

@testable import Capture

/// The btmon capture of two rides on the real Linux Bluetooth stack (`make test-vm`, Fixtures/README.md): first
/// bluetoothd on both ends of a btvirt link (so the file holds the central that received the notifications as ATT
/// 0x23 and the emulated sensor's controller that sent them), then three bumble sensors sending plain ATT 0x1B to
/// the kernel's controller, with a dropped link and a silent sensor whose link the watchdog cycled. The expected
/// values are the emulators' own log of what they sent.
final class RealStackCaptureTests: XCTestCase {
    let bike = "00:AA:01:01:00:01"
    let btvirtCentral = "00:AA:01:00:00:00"
    let powerMeter = "00:AA:02:00:00:01"
    let speedSensor = "00:AA:02:00:00:02"
    let heartStrap = "00:AA:02:00:00:03"
    let measurements: [(String, UInt16)] = [("2a63", 0x2A63), ("2a5b", 0x2A5B), ("2a37", 0x2A37)]

    func fixture(_ suffix: String) throws -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/realstack/bluez-5.66-btvirt-bumble" + suffix)
    }

    /// The values one sensor sent of one characteristic, from "<unix time> <address> <uuid> <hex> <ride second>"
    /// lines.
    func sent(_ address: String, _ uuid: String) throws -> [[UInt8]] {
        let text = try String(contentsOf: fixture(".sent"), encoding: .utf8)
        let lines: [[Substring]] = text.split(separator: "\n").map { $0.split(separator: " ") }
        return lines.filter { $0.count == 5 && $0[1] == address && $0[2] == uuid }
            .map { words in bytes(hex: words[3]) }
    }

    func bytes(hex text: Substring) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { index -> UInt8 in
            UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16)!
        }
    }

    func replay() throws -> GATTReplay {
        try GATTReplay.read([UInt8](Data(contentsOf: fixture(".btsnoop"))))
    }

    func address(of event: RideEvent) -> String? {
        switch event.kind {
        case .notification(let address, _, _), .read(let address, _, _), .connected(let address, _),
            .disconnected(let address):
            address
        default:
            nil
        }
    }

    func testEveryNotificationEachSensorSentIsReadOnceInOrder() throws {
        let replay = try replay()
        XCTAssertEqual(replay.unmappedHandles, [], "every handle is mapped by the discovery in the capture")
        var checked = 0
        for sensor in [bike, powerMeter, speedSensor, heartStrap] {
            for (uuid, characteristic) in measurements {
                let sentValues = try sent(sensor, uuid)
                guard !sentValues.isEmpty else { continue }
                let received = replay.events.compactMap { event -> [UInt8]? in
                    guard case .notification(sensor, characteristic, let value) = event.kind else { return nil }
                    return value
                }
                // In order and each once; the last one sent may have gone out as the link was closing.
                XCTAssertGreaterThanOrEqual(received.count, sentValues.count - 1, "\(sensor) \(uuid)")
                XCTAssertTrue(received == Array(sentValues.prefix(received.count)), "\(sensor) \(uuid)")
                checked += 1
            }
        }
        XCTAssertEqual(checked, 6, "three measurements from the btvirt device, one from each bumble sensor")
    }

    func testTheSideOfTheEmulatedSensorIsNeverASensor() throws {
        // btvirt's sensor controller was the peripheral of its link: nothing of that side is a sensor, and the
        // central's address appears nowhere.
        XCTAssertEqual(try replay().events.filter { address(of: $0) == btvirtCentral }.count, 0)
    }

    func testReadsAreTheSensorsOwnAnswers() throws {
        // Each sensor's GAP name and battery level, never the btvirt central's own name ("BlueZ 5.66"), which
        // the central served to the sensor on the same link.
        let replay = try replay()
        for (sensor, name, battery) in [
            (bike, "Emulated Bike", UInt8(76)), (powerMeter, "Emulated Power", 81), (speedSensor, "Emulated Speed", 64),
            (heartStrap, "Emulated Heart", 12),
        ] {
            let reads = replay.events.compactMap { event -> (UInt16, [UInt8])? in
                guard case .read(sensor, let characteristic, let value) = event.kind else { return nil }
                return (characteristic, value)
            }
            XCTAssertEqual(
                Set(reads.filter { $0.0 == 0x2A00 }.map { String(decoding: $0.1, as: UTF8.self) }), [name], sensor)
            XCTAssertEqual(Set(reads.filter { $0.0 == 0x2A19 }.map(\.1)), [[battery]], sensor)
        }
    }

    func testTheDroppedLinkAndTheWatchdogsReconnectionAreLinkEvents() throws {
        let replay = try replay()
        func links(_ sensor: String) -> [String] {
            replay.events.compactMap { event -> String? in
                switch event.kind {
                case .connected(sensor, _): "connect"
                case .disconnected(sensor): "disconnect"
                default: nil
                }
            }
        }
        // The power meter dropped its link and came back; the silent speed sensor's link was cycled by cyclelog;
        // every link closed after the ride.
        XCTAssertEqual(links(powerMeter), ["connect", "disconnect", "connect", "disconnect"])
        XCTAssertEqual(links(speedSensor), ["connect", "disconnect", "connect", "disconnect"])
        XCTAssertEqual(links(heartStrap), ["connect", "disconnect"])
    }
}
