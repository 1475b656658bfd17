import Workouts
import XCTest

@testable import Capture
@testable import RideJournal

/// The btsnoop reader against bytes worked by hand from btsnoop's and the Core Specification's layouts and against our writer.
final class BtsnoopTests: XCTestCase {
    func bytes(_ hex: String) -> [UInt8] { Journal.parseHex(hex)! }

    /// The CPM notification record in an H4 file.
    let h4File =
        "6274736e6f6f700000000001000003ea" + "00000014000000140000000100000000" + "00e2f512eec1e830"
        + "02" + "40200f00" + "0b000400" + "1b0e0020" + "00fa002a000040"

    func testTheSpecRecordInAnH4File() throws {
        let replay = try GATTReplay.read(bytes(h4File), explicitMap: [0x000E: 0x2A63])
        XCTAssertEqual(replay.problems, [])
        XCTAssertEqual(
            replay.events,
            [
                RideEvent(
                    timeMicroseconds: 1_714_550_400_510_000,
                    .notification(
                        sensor: "hci0-handle-0x40", characteristic: 0x2A63, value: bytes("2000fa002a000040")))
            ])
    }

    func testTheSameRecordInALinuxMonitorFile() throws {
        let file =
            "6274736e6f6f700000000001000007d1" + "00000013000000130000000500000000" + "00e2f512eec1e830"
            + "40200f000b0004001b0e002000fa002a000040"
        let replay = try GATTReplay.read(bytes(file), explicitMap: [0x000E: 0x2A63])
        XCTAssertEqual(replay.events.count, 1)
        XCTAssertEqual(replay.events.first?.timeMicroseconds, 1_714_550_400_510_000)
    }

    func testWithoutDiscoveryOrAMapTheHandleIsReportedNotGuessed() throws {
        let replay = try GATTReplay.read(bytes(h4File))
        XCTAssertEqual(replay.events, [])
        XCTAssertEqual(
            replay.unmappedHandles,
            [GATTReplay.UnmappedHandle(sensor: "hci0-handle-0x40", handle: 0x000E, notifications: 1)])
    }

    /// A discovery exchange (ATT Read By Group Type, Read By Type, Find Information), then a battery read and the notification, written with our writer.
    func testDiscoveryMapsHandlesAndReadsAreKept() throws {
        for datalink in [Btsnoop.Datalink.hciUART, .linuxMonitor, .hciUnframed] {
            var writer = BtsnoopWriter(datalink: datalink)
            writer.appendConnection(handle: 0x0040, address: "C0:11:22:33:44:55", timeMicroseconds: 1_000)
            let exchange: [(Bool, String)] = [
                (false, "100100ffff0028"), (true, "110601000700001808000b0001180c0016001818"),
                (false, "080c0016000328"), (true, "09070d00100e00632a100002110065 2a12000213005d2a"),
                (false, "0a1100"), (true, "0b0c000000"),
                (false, "12 0f00 0100"), (true, "13"),
                (true, "1b0e002000fa002a000040"),
            ]
            for (index, (received, pdu)) in exchange.enumerated() {
                writer.appendATT(handle: 0x0040, received: received, timeMicroseconds: Int64(2_000 + index), bytes(pdu))
            }
            writer.appendDisconnection(handle: 0x0040, timeMicroseconds: 9_000)
            let replay = try GATTReplay.read(writer.bytes)
            XCTAssertEqual(replay.problems, [], "\(datalink)")
            XCTAssertEqual(
                replay.events.map(\.kind),
                [
                    .connected(sensor: "C0:11:22:33:44:55", name: nil),
                    .read(sensor: "C0:11:22:33:44:55", characteristic: 0x2A65, value: bytes("0c000000")),
                    .notification(
                        sensor: "C0:11:22:33:44:55", characteristic: 0x2A63, value: bytes("2000fa002a000040")),
                    .disconnected(sensor: "C0:11:22:33:44:55"),
                ], "\(datalink)")
        }
    }

    /// `record --capture`: the ride's own events are log lines beside the air's packets, written after them (up to
    /// a fraction of a second late); the replay takes the sensors' values from the air, everything else from the
    /// log, each at its own time. Log lines of other programs are not the ride's.
    func testARideLoggedIntoItsCaptureReplaysWithItsOwnEvents() throws {
        let sensor = "C0:11:22:33:44:55"
        let start = RideEvent(
            timeMicroseconds: 1_000, .control(.start(WorkoutPlan(name: "Tempo", goal: .timeSeconds(3600)))))
        let connected = RideEvent(timeMicroseconds: 1_500, .connected(sensor: sensor, name: "Stages Power L"))
        let battery = RideEvent(timeMicroseconds: 1_600, .read(sensor: sensor, characteristic: 0x2A19, value: [81]))
        let lap = RideEvent(timeMicroseconds: 2_003, .control(.lap))
        let end = RideEvent(timeMicroseconds: 9_500, .control(.end))
        var writer = BtsnoopWriter(datalink: .linuxMonitor)
        writer.appendLog(ident: "cyclelog", Journal.line(start), timeMicroseconds: 1_200)
        writer.appendConnection(handle: 0x0040, address: sensor, timeMicroseconds: 1_400)
        let exchange: [(Bool, String)] = [
            (false, "100100ffff0028"), (true, "110601000700001808000b0001180c0016001818"),
            (false, "080c0016000328"), (true, "09070d00100e00632a100002110065 2a12000213005d2a"),
            (false, "0a1100"), (true, "0b0c000000"),
        ]
        for (index, (received, pdu)) in exchange.enumerated() {
            writer.appendATT(handle: 0x0040, received: received, timeMicroseconds: Int64(1_410 + index), bytes(pdu))
        }
        writer.appendLog(ident: "bluetoothd", "Battery: 81%", timeMicroseconds: 1_650)
        writer.appendLog(ident: "cyclelog", Journal.line(connected), timeMicroseconds: 1_700)
        writer.appendLog(ident: "cyclelog", Journal.line(battery), timeMicroseconds: 1_700)
        writer.appendATT(handle: 0x0040, received: true, timeMicroseconds: 2_000, bytes("1b0e002000fa002a000040"))
        writer.appendATT(handle: 0x0040, received: true, timeMicroseconds: 3_000, bytes("1b0e002000fb002a000040"))
        writer.appendLog(ident: "cyclelog", Journal.line(lap), timeMicroseconds: 3_100)
        writer.appendLog(ident: "cyclelog", "this is not a journal line", timeMicroseconds: 3_200)
        writer.appendLog(ident: "cyclelog", Journal.line(end), timeMicroseconds: 9_600)
        writer.appendDisconnection(handle: 0x0040, timeMicroseconds: 9_700)
        let replay = try GATTReplay.read(writer.bytes)
        func power(_ time: Int64, _ hex: String) -> RideEvent {
            RideEvent(timeMicroseconds: time, .notification(sensor: sensor, characteristic: 0x2A63, value: bytes(hex)))
        }
        XCTAssertEqual(
            replay.events,
            [start, connected, battery, power(2_000, "2000fa002a000040"), lap, power(3_000, "2000fb002a000040"), end])
        XCTAssertEqual(replay.problems.map(\.record), [15])
        XCTAssertTrue(replay.problems.first?.message.hasPrefix("a ride log line: ") == true)
        // The events keep the records they came from, for messages: the lap is record 14.
        XCTAssertEqual(replay.eventRecords[4], 14)
    }

    /// A sensor BlueZ already knows is not discovered again: `record --capture` logs the handle map BlueZ has
    /// before subscribing, and the replay maps the sensor's values with it, on this connection and later ones.
    func testAHandleMapLoggedBeforeTheValuesMapsThem() throws {
        let sensor = "C0:11:22:33:44:55"
        XCTAssertEqual(
            GATTReplay.handleMapLine(address: sensor, [0x0012: 0x2A5B, 0x000E: 0x2A63]),
            "C0:11:22:33:44:55 000e=2a63 0012=2a5b")
        var writer = BtsnoopWriter(datalink: .linuxMonitor)
        writer.appendConnection(handle: 0x0040, address: sensor, timeMicroseconds: 1_000)
        writer.appendATT(handle: 0x0040, received: true, timeMicroseconds: 1_100, bytes("1b0e002000fa002a000040"))
        writer.appendLog(ident: "cyclelog-gatt", "C0:11:22:33:44:55 000e=2a63", timeMicroseconds: 1_200)
        writer.appendLog(ident: "cyclelog-gatt", "D4:00:00:00:00:01 0010=2a37", timeMicroseconds: 1_200)
        writer.appendLog(ident: "cyclelog-gatt", "C0:11:22:33:44:55 0010:2a37", timeMicroseconds: 1_200)
        writer.appendATT(handle: 0x0040, received: true, timeMicroseconds: 2_000, bytes("1b0e002000fb002a000040"))
        writer.appendATT(handle: 0x0040, received: true, timeMicroseconds: 2_100, bytes("1b10000601"))
        writer.appendDisconnection(handle: 0x0040, timeMicroseconds: 3_000)
        writer.appendConnection(handle: 0x0041, address: sensor, timeMicroseconds: 4_000)
        writer.appendATT(handle: 0x0041, received: true, timeMicroseconds: 5_000, bytes("1b0e002000fc002a000040"))
        let replay = try GATTReplay.read(writer.bytes)
        XCTAssertEqual(
            replay.events.compactMap { event -> [UInt8]? in
                guard case .notification(sensor, 0x2A63, let value) = event.kind else { return nil }
                return value
            },
            [bytes("2000fb002a000040"), bytes("2000fc002a000040")],
            "the value before the map is unmapped; the heart-rate map of another device is not this one's")
        XCTAssertEqual(replay.unmappedHandles.map(\.notifications), [1, 1])
        XCTAssertEqual(replay.problems.map(\.record), [5])
    }

    /// EATT (Core Vol 3 Part G §5.3.2, Part A §4.25–4.26): BlueZ opens enhanced credit-based channels of SPSM 0x0027
    /// when both sides can, and notifications travel on them as K-frames, an SDU length before the ATT PDU.
    func testNotificationsOnAnEnhancedATTBearerAreRead() throws {
        let sensor = "C0:11:22:33:44:55"
        var writer = BtsnoopWriter(datalink: .linuxMonitor)
        writer.appendConnection(handle: 0x0040, address: sensor, timeMicroseconds: 1_000)
        // L2CAP frames on the ACL link: length, channel id, payload.
        func frame(_ channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
            [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)]
                + payload
        }
        func send(_ received: Bool, _ time: Int64, _ l2cap: [UInt8]) {
            let boundary: UInt8 = received ? 0x20 : 0x00
            writer.append(
                .aclData, received: received, timeMicroseconds: time,
                [0x40, boundary, UInt8(l2cap.count), 0] + l2cap)
        }
        // Request (id 7): SPSM 0x0027, MTU 517, MPS 251, credits 10, source channels 0x0040 and 0x0041.
        send(false, 1_100, frame(0x0005, bytes("17 07 0c00 2700 0502 fb00 0a00 4000 4100")))
        // Response: MTU, MPS, credits, result 0, destination channels 0x0050 and 0x0051.
        send(true, 1_200, frame(0x0005, bytes("18 07 0c00 0502 fb00 0a00 0000 5000 5100")))
        // BlueZ 5.66 asks for one channel at a time (LE Credit Based, 0x14): SPSM, source channel 0x0043, MTU,
        // MPS, credits; the answer (0x15): destination channel 0x0053, MTU, MPS, credits, result 0.
        send(false, 1_210, frame(0x0005, bytes("14 09 0a00 2700 4300 0502 bc00 0300")))
        send(true, 1_220, frame(0x0005, bytes("15 09 0a00 5300 0502 bc00 0300 0000")))
        // A request for another protocol's SPSM opens no ATT bearer.
        send(false, 1_250, frame(0x0005, bytes("17 08 0a00 8000 0502 fb00 0a00 4200")))
        writer.appendLog(ident: "cyclelog-gatt", "C0:11:22:33:44:55 000e=2a63", timeMicroseconds: 1_300)
        let notification = bytes("1b0e002000fa002a000040")
        send(true, 2_000, frame(0x0040, [UInt8(notification.count), 0] + notification))
        // One SDU in two K-frames: the first with the SDU's length.
        let second = bytes("1b0e002000fb002a000040")
        send(true, 3_000, frame(0x0041, [UInt8(second.count), 0] + second.prefix(5)))
        send(true, 3_001, frame(0x0041, Array(second.dropFirst(5))))
        send(true, 3_500, frame(0x0053, [UInt8(notification.count), 0] + notification))
        send(true, 4_000, frame(0x0042, [UInt8(notification.count), 0] + notification))
        let replay = try GATTReplay.read(writer.bytes)
        XCTAssertEqual(
            replay.events.filter { if case .notification = $0.kind { true } else { false } },
            [
                RideEvent(
                    timeMicroseconds: 2_000,
                    .notification(sensor: sensor, characteristic: 0x2A63, value: bytes("2000fa002a000040"))),
                RideEvent(
                    timeMicroseconds: 3_001,
                    .notification(sensor: sensor, characteristic: 0x2A63, value: bytes("2000fb002a000040"))),
                RideEvent(
                    timeMicroseconds: 3_500,
                    .notification(sensor: sensor, characteristic: 0x2A63, value: bytes("2000fa002a000040"))),
            ])
        XCTAssertEqual(replay.otherChannelPDUs, 6, "the five signalling commands and the frame on channel 0x0042")
    }

    /// A trainer steered in a capture: its control point found by discovery, a Write Request to it (Set Target Power
    /// 200 W) and the indicated answer replay as the live recorder journals them; a write to a CCCD does not.
    func testWritesToACharacteristicReplayAsWriteLines() throws {
        var writer = BtsnoopWriter(datalink: .hciUART)
        writer.appendConnection(handle: 0x0040, address: "F1:22:33:44:55:66", timeMicroseconds: 0)
        let exchange: [(Bool, String)] = [
            // Read By Type (0x2803) from 0x0020: the control point's value at 0x0029, write + indicate (0x28).
            (false, "08 2000 ffff 0328"), (true, "09 07 2800 28 2900 d92a"),
            (false, "12 2a00 0200"), (true, "13"),
            (false, "12 2900 05c800"), (true, "13"),
            (true, "1d 2900 800501"),
            (false, "52 2900 00"),
            // Not this host's requests: one the peer sent (to this host's attributes), and one cut short.
            (true, "12 2900 01"), (false, "12 29"),
        ]
        for (index, (received, pdu)) in exchange.enumerated() {
            writer.appendATT(handle: 0x0040, received: received, timeMicroseconds: Int64(1 + index), bytes(pdu))
        }
        let replay = try GATTReplay.read(writer.bytes)
        XCTAssertEqual(replay.problems, [])
        let trainer = "F1:22:33:44:55:66"
        XCTAssertEqual(
            replay.events.map(\.kind),
            [
                .connected(sensor: trainer, name: nil),
                .write(sensor: trainer, characteristic: 0x2AD9, value: bytes("05c800")),
                .notification(sensor: trainer, characteristic: 0x2AD9, value: bytes("800501")),
                .write(sensor: trainer, characteristic: 0x2AD9, value: bytes("00")),
            ])
    }

    func testFindInformationAlsoMapsValueHandles() throws {
        // ATT Find Information Response, format 0x01: 0x000D is a declaration (0x2803), 0x000E the CPM value, 0x000F its CCCD.
        var writer = BtsnoopWriter(datalink: .hciUART)
        writer.appendConnection(handle: 0x0040, address: "C0:11:22:33:44:55", timeMicroseconds: 0)
        writer.appendATT(handle: 0x0040, received: false, timeMicroseconds: 1, bytes("04 0d00 0f00"))
        writer.appendATT(
            handle: 0x0040, received: true, timeMicroseconds: 2, bytes("05 01 0d00 0328 0e00 632a 0f00 0229"))
        writer.appendATT(handle: 0x0040, received: true, timeMicroseconds: 3, bytes("1b0e002000fa002a000040"))
        writer.appendATT(handle: 0x0040, received: true, timeMicroseconds: 4, bytes("1b0f000100"))
        let replay = try GATTReplay.read(writer.bytes)
        XCTAssertEqual(replay.events.count, 2)
        XCTAssertEqual(
            replay.events.last?.kind,
            .notification(sensor: "C0:11:22:33:44:55", characteristic: 0x2A63, value: bytes("2000fa002a000040")))
        XCTAssertEqual(replay.unmappedHandles.map(\.handle), [0x000F])
    }

    func testAFragmentedNotificationIsReassembled() throws {
        // A 37-octet CPM notification does not fit a 27-octet ACL payload (without Data Length Extension).
        let value = bytes(
            "FF 1F C8 00 64 40 06 34 12 00 00 00 08 00 01 00 04 F4 01 9C FF 20 03 E0 FF B4 A0 05 0A 00 BE 00 64 00")
        var writer = BtsnoopWriter(datalink: .hciUART)
        writer.appendATT(handle: 0x0040, received: true, timeMicroseconds: 0, [0x1B, 0x0E, 0x00] + value)
        // The first fragment starts as the spec shows: 40 20 1B 00 | 25 00 04 00 | 1B 0E 00 FF 1F …
        let firstRecordData = Array(writer.bytes[(16 + 24)..<(16 + 24 + 12)])
        XCTAssertEqual(firstRecordData, bytes("02 40 20 1b 00 25 00 04 00 1b 0e 00"))
        let replay = try GATTReplay.read(writer.bytes, explicitMap: [0x000E: 0x2A63])
        XCTAssertEqual(
            replay.events.map(\.kind), [.notification(sensor: "hci0-handle-0x40", characteristic: 0x2A63, value: value)]
        )
    }

    func testMultipleHandleValueNotificationsAreSplit() throws {
        var writer = BtsnoopWriter(datalink: .linuxMonitor)
        // 0x23: {0x000E, 4, 00 00 c8 00} {0x0022, 7, 01 …}: CPM 200 W and a CSC wheel value in one PDU.
        writer.appendATT(
            handle: 0x0041, received: true, timeMicroseconds: 5,
            bytes("23 0e00 0400 0000c800 2200 0700 01 10270000 0020"), aclPayloadLimit: 251)
        let replay = try GATTReplay.read(writer.bytes, explicitMap: [0x000E: 0x2A63, 0x0022: 0x2A5B])
        XCTAssertEqual(
            replay.events.map(\.kind),
            [
                .notification(sensor: "hci0-handle-0x41", characteristic: 0x2A63, value: bytes("0000c800")),
                .notification(sensor: "hci0-handle-0x41", characteristic: 0x2A5B, value: bytes("01102700000020")),
            ])
    }

    func testATruncatedFileKeepsEverythingBeforeTheCut() throws {
        var writer = BtsnoopWriter(datalink: .hciUART)
        for index in 0..<3 {
            writer.appendATT(handle: 0x40, received: true, timeMicroseconds: Int64(index), bytes("1b0e000000c800"))
        }
        let cut = Array(writer.bytes.dropLast(3))
        let replay = try GATTReplay.read(cut, explicitMap: [0x000E: 0x2A63])
        XCTAssertEqual(replay.events.count, 2)
        XCTAssertEqual(replay.problems.map(\.record), [3])
        XCTAssertTrue(replay.problems[0].message.contains("ends inside the record"), replay.problems[0].message)
    }

    func testBadHeadersAreRefusedWithTheReason() {
        XCTAssertThrowsError(try GATTReplay.read(Array("not a capture".utf8))) {
            XCTAssertEqual($0 as? Btsnoop.FileError, .notBtsnoop)
        }
        XCTAssertThrowsError(try GATTReplay.read(bytes("6274736e6f6f700000000001000007d2"))) {
            XCTAssertEqual($0 as? Btsnoop.FileError, .unsupportedDatalink(2002))
        }
    }

    func testAnACLLengthThatDisagreesIsReportedAndSkipped() throws {
        var writer = BtsnoopWriter(datalink: .hciUART)
        writer.append(.aclData, received: true, timeMicroseconds: 0, bytes("4020 0f00 0b00 0400 1b0e00"))
        writer.appendATT(handle: 0x40, received: true, timeMicroseconds: 1, bytes("1b0e000000c800"))
        let replay = try GATTReplay.read(writer.bytes, explicitMap: [0x000E: 0x2A63])
        XCTAssertEqual(replay.events.count, 1)
        XCTAssertEqual(replay.problems.map(\.record), [1])
    }

    /// An LE Connection Complete event is 14 octets up to the peer's address (Core spec Vol 4 Part E §7.7.65.1):
    /// one octet short is reported, never read past (the btsnoop fuzzer's first find).
    func testAConnectionCompleteEventCutInItsAddressIsReported() throws {
        func replay(_ event: String) throws -> GATTReplay {
            var writer = BtsnoopWriter(datalink: .hciUART)
            writer.append(.event, received: true, timeMicroseconds: 0, bytes(event))
            return try GATTReplay.read(writer.bytes)
        }
        let whole = try replay("3e0b01 00 4000 00 00 5544332211c0")
        XCTAssertEqual(
            whole.events, [RideEvent(timeMicroseconds: 0, .connected(sensor: "C0:11:22:33:44:55", name: nil))])
        XCTAssertEqual(whole.problems, [])
        let cut = try replay("3e0b01 00 4000 00 00 5544332211")
        XCTAssertEqual(cut.events, [])
        XCTAssertEqual(cut.problems.map(\.message), ["a truncated LE Connection Complete event"])
    }
}
