import Workouts
import XCTest

@testable import Capture
@testable import RideJournal

/// The btsnoop reader against the spec's exact bytes (§9.7, §9.8) and against our writer.
final class BtsnoopTests: XCTestCase {
    func bytes(_ hex: String) -> [UInt8] { Journal.parseHex(hex)! }

    /// Spec §9.8: the CPM notification record in an H4 file.
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

    /// Spec §9.7's discovery exchange, then a battery read and the notification, written with our writer.
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

    func testFindInformationAlsoMapsValueHandles() throws {
        // Spec §9.6 0x05 format 0x01: 0x000D is a declaration (0x2803), 0x000E the CPM value, 0x000F its CCCD.
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
        // Spec §1.5 I: a 37-octet CPM notification does not fit a 27-octet ACL payload (§9.4).
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
