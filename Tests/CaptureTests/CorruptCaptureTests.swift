import Foundation
import TestSupport
import Workouts
import XCTest

@testable import Capture
@testable import RideJournal

/// Damaged files never crash the readers: random byte changes and cuts of a real capture and journal (a fixed
/// seed, so a failure reproduces) give events and problems, never a trap.
final class CorruptCaptureTests: XCTestCase {
    let rides = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/rides")

    func testDamagedBtsnoopCapturesAreReadAroundTheDamage() throws {
        let capture = try [UInt8](
            Data(contentsOf: rides.appendingPathComponent("fitparse_Edge810-Vector-2013-08-16-15-35-10.btsnoop"))
        )
        .prefix(60_000)
        let clean = try GATTReplay.read(Array(capture))
        var random = SplitMix64(seed: 42)
        for _ in 0..<200 {
            var damaged = Array(capture)
            for _ in 0..<Int.random(in: 1...20, using: &random) {
                // Leave the file header alone: a broken header is refused as a whole (tested elsewhere).
                let index = Int.random(in: 16..<damaged.count, using: &random)
                damaged[index] = UInt8.random(in: 0...255, using: &random)
            }
            if Bool.random(using: &random) { damaged.removeLast(Int.random(in: 0..<1000, using: &random)) }
            let replay = try GATTReplay.read(damaged)
            XCTAssertLessThanOrEqual(replay.events.count, clean.events.count + 50)
        }
    }

    /// The quick way a notification record is taken (`GATTReplay.quickNotification`) gives what the general way
    /// (`add`, every record) gives, event for event, record for record, problem for problem: for captures of all
    /// three datalinks, whole and damaged.
    func testTheQuickWayReadsEveryCaptureAsTheGeneralWay() throws {
        let h4 = try [UInt8](Data(contentsOf: rides.appendingPathComponent("sweatpy_4078723797.btsnoop")))
        var unframed = BtsnoopWriter(datalink: .hciUnframed)
        _ = try Btsnoop.forEachPacket(in: h4) { _, packet in
            unframed.append(
                packet.type, received: packet.received, timeMicroseconds: packet.timeMicroseconds, Array(packet.data))
        }
        let captures = [
            h4, unframed.bytes,
            try [UInt8](
                Data(contentsOf: rides.appendingPathComponent("fitparse_Edge810-Vector-2013-08-16-15-35-10.btsnoop"))),
            try [UInt8](
                Data(
                    contentsOf: rides.deletingLastPathComponent().appendingPathComponent(
                        "realstack/bluez-5.66-btvirt-bumble.btsnoop"))),
        ]
        func assertTheSame(_ bytes: [UInt8], _ label: String, map: [UInt16: UInt16] = [:]) throws {
            let quick = try GATTReplay.read(bytes, explicitMap: map, progress: nil, quickly: true)
            let general = try GATTReplay.read(bytes, explicitMap: map, progress: nil, quickly: false)
            XCTAssertEqual(quick.events, general.events, label)
            XCTAssertEqual(quick.eventRecords, general.eventRecords, label)
            XCTAssertEqual(quick.problems, general.problems, label)
            XCTAssertEqual(quick.unmappedHandles, general.unmappedHandles, label)
        }
        var random = SplitMix64(seed: 83)
        for (number, capture) in captures.enumerated() {
            try assertTheSame(capture, "capture \(number)")
            // A map given by the user comes before what the capture's discovery learnt.
            try assertTheSame(capture, "capture \(number) with a map", map: [0x000E: 0x2A37, 0x0012: 0x2A5B])
            XCTAssertGreaterThan(
                try GATTReplay.read(capture).events.filter {
                    if case .notification = $0.kind { true } else { false }
                }.count, 400, "capture \(number) has notifications to take quickly")
            let prefix = Array(capture.prefix(40_000))
            for round in 0..<100 {
                var damaged = prefix
                for _ in 0..<Int.random(in: 1...20, using: &random) {
                    damaged[Int.random(in: 16..<damaged.count, using: &random)] = UInt8.random(
                        in: 0...255, using: &random)
                }
                try assertTheSame(damaged, "capture \(number), damaged \(round)")
            }
        }
    }

    func testDamagedJournalsAreReadAroundTheDamage() throws {
        let text = try String(
            contentsOf: rides.appendingPathComponent("sweatpy_2020-06-01-16-52-40.journal"), encoding: .utf8)
        let clean = Journal.read(text)
        var random = SplitMix64(seed: 7)
        var bytes = Array(text.utf8)
        for _ in 0..<300 {
            let index = Int.random(in: 0..<bytes.count, using: &random)
            bytes[index] = UInt8.random(in: 0...255, using: &random)
        }
        let damaged = Journal.read(String(decoding: bytes, as: UTF8.self))
        XCTAssertFalse(damaged.problems.isEmpty)
        XCTAssertGreaterThan(damaged.events.count, clean.events.count / 2)
        // What was read still builds a workout.
        var builder = WorkoutBuilder()
        for event in damaged.events { builder.add(event) }
        XCTAssertNotNil(builder.finish())
    }

    func testDamagedStoredJournalsFailWithAnErrorNotATrap() throws {
        let events = Journal.read(
            try String(contentsOf: rides.appendingPathComponent("sweatpy_2020-06-01-16-52-40.journal"), encoding: .utf8)
        ).events
        let packed = CompactJournal.encode(events)
        var random = SplitMix64(seed: 9)
        for _ in 0..<300 {
            var damaged = packed
            let index = Int.random(in: 0..<damaged.count, using: &random)
            damaged[index] ^= UInt8.random(in: 1...255, using: &random)
            _ = try? CompactJournal.decode(damaged)
        }
        // The inner packing, damaged after inflating, also fails cleanly.
        var inner = PackedWriter()
        inner.byte(1)
        inner.signed(5)
        inner.unsigned(9)  // a sensor number never defined
        XCTAssertThrowsError(try CompactJournal.decode(Zlib.deflate(inner.bytes)))
        // The same in the channel packing: a channel of a sensor never defined, an order naming a channel beyond
        // the table or more values than its channel holds. The well-formed chunk first, to show the writing right.
        func chunk(sensors: Int, order: [UInt64]) -> [UInt8] {
            var writer = PackedWriter()
            writer.byte(ChannelPacking.mark)
            writer.signed(1_714_550_400_000_000)
            writer.unsigned(UInt64(sensors))
            for _ in 0..<sensors { writer.text("C0:11:22:33:44:55") }
            writer.unsigned(1)  // one channel: sensor 0's notified 0x2A63
            writer.unsigned(0)
            writer.unsigned(0x2A63)
            writer.byte(1)
            writer.unsigned(UInt64(order.count))
            var entries = PackedWriter()
            for entry in order { entries.unsigned(entry) }
            writer.section(entries)
            writer.section(PackedWriter())  // no other events
            var values = PackedWriter()
            values.unsigned(1)  // one value, 250 ms after the base, of two octets
            var times = PackedWriter()
            times.signed(250_000)
            values.section(times)
            var lengths = PackedWriter()
            lengths.unsigned(2)
            values.section(lengths)
            values.bytes([0x00, 0x00])
            writer.section(values)
            return Zlib.deflate(writer.bytes)
        }
        XCTAssertEqual(
            try CompactJournal.decode(chunk(sensors: 1, order: [1])),
            [
                RideEvent(
                    timeMicroseconds: 1_714_550_400_250_000,
                    .notification(sensor: "C0:11:22:33:44:55", characteristic: 0x2A63, value: [0, 0]))
            ])
        XCTAssertThrowsError(try CompactJournal.decode(chunk(sensors: 0, order: [1])))
        XCTAssertThrowsError(try CompactJournal.decode(chunk(sensors: 1, order: [2])))
        XCTAssertThrowsError(try CompactJournal.decode(chunk(sensors: 1, order: [1, 1])))
    }
}
