import Foundation
import Workouts
import XCTest

@testable import Capture

/// The btmon capture of a ride on the real Linux Bluetooth stack (`make test-vm`): bluetoothd 5.66 on both ends
/// of an emulated air, so the file holds both controllers — the central that received the notifications (as
/// ATT 0x23, BlueZ to BlueZ) and the emulated sensor's controller that sent them — with discovery, a dropped link
/// and its reconnection. The expected values are the emulator's own log of what it sent.
final class RealStackCaptureTests: XCTestCase {
    let sensor = "00:AA:01:01:00:01"
    let central = "00:AA:01:00:00:00"

    func fixture(_ name: String) throws -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/realstack/" + name)
    }

    /// "<unix time> <address> <uuid> <hex> <ride second>" lines of what the emulated sensor sent.
    func sent(_ uuid: String) throws -> [[UInt8]] {
        let text = try String(contentsOf: fixture("btvirt-bluez-5.66.sent"), encoding: .utf8)
        return text.split(separator: "\n").map { $0.split(separator: " ") }.filter { $0.count == 5 && $0[2] == uuid }
            .map { words in
                let hex = Array(words[3].utf8)
                return stride(from: 0, to: hex.count, by: 2).map {
                    UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16)!
                }
            }
    }

    func testEveryNotificationTheSensorSentIsReadOnceFromTheCentralsSide() throws {
        let bytes = try [UInt8](Data(contentsOf: fixture("btvirt-bluez-5.66.btsnoop")))
        let replay = try GATTReplay.read(bytes)
        XCTAssertEqual(replay.unmappedHandles, [], "every handle is mapped by the discovery in the capture")
        for (uuid, characteristic) in [("2a63", UInt16(0x2A63)), ("2a5b", 0x2A5B), ("2a37", 0x2A37)] {
            let received = replay.events.compactMap { event -> [UInt8]? in
                guard case .notification(sensor, characteristic, let value) = event.kind else { return nil }
                return value
            }
            // In order and each once; the last one sent may have gone out as cyclelog was closing the link.
            let sentValues = try sent(uuid)
            XCTAssertGreaterThanOrEqual(received.count, sentValues.count - 1, "characteristic \(uuid)")
            XCTAssertTrue(received == Array(sentValues.prefix(received.count)), "characteristic \(uuid)")
        }
        // The emulated sensor's own controller was the peripheral of its link: nothing of that side is a sensor.
        let centralEvents = replay.events.filter { event in
            switch event.kind {
            case .notification(let address, _, _), .read(let address, _, _), .connected(let address, _),
                .disconnected(let address):
                return address == central
            default:
                return false
            }
        }
        XCTAssertEqual(centralEvents.count, 0)
        // Reads are the sensor's answers only: its GAP name and its battery (76 %), never the central's own name
        // ("BlueZ 5.66"), which the central served to the sensor on the same link.
        let reads = replay.events.compactMap { event -> (UInt16, [UInt8])? in
            guard case .read(sensor, let characteristic, let value) = event.kind else { return nil }
            return (characteristic, value)
        }
        XCTAssertFalse(reads.isEmpty)
        XCTAssertEqual(
            Set(reads.filter { $0.0 == 0x2A00 }.map { String(decoding: $0.1, as: UTF8.self) }), ["Emulated Bike"])
        XCTAssertEqual(Set(reads.filter { $0.0 == 0x2A19 }.map(\.1)), [[76]])
        let links = replay.events.compactMap { event -> String? in
            switch event.kind {
            case .connected(let address, _): "connect \(address)"
            case .disconnected(let address): "disconnect \(address)"
            default: nil
            }
        }
        XCTAssertEqual(
            Array(links.prefix(3)), ["connect \(sensor)", "disconnect \(sensor)", "connect \(sensor)"],
            "the dropped link and its reconnection")
    }
}
