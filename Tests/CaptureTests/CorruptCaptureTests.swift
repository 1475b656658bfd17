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
    }
}
