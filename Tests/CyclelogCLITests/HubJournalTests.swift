import Foundation
import TestSupport
import XCTest

/// The sensor hub's values against the ride's journal: what an app on the hub received, byte for byte, is what
/// `show --hub` makes again from the stored journal.
final class HubJournalTests: XCTestCase {
    /// A ride with a power meter, a cadence sensor and a strap recorded with `--bridge`, an app on the stand-in's
    /// second adapter subscribed to the four measurements: on each characteristic, every value the app received
    /// from its subscription on is the replay's, in the same order, until one of them ends (the hub goes on
    /// re-broadcasting while the ride is saved; those readings are in no journal). Mid-ride the app sets the wheel
    /// revolutions to 1 000 000 on the SC Control Point, which the hub answers itself: the write is in the journal,
    /// and the replay answers it and counts on from it where the hub did.
    func testWhatTheAppReceivedIsTheJournalsReplayByteForByte() async throws {
        let app = "00:AA:02:00:00:06"
        let measurements = ["2a63", "2a5b", "2a37", "2ad2"]
        // Set Cumulative Value (0x01), 1 000 000 (0x000F4240, little-endian): CSCS 1.0 §3.4.
        let setCumulative = "0140420f00"
        let standIn = try StandIn(
            sensors: [StandIn.power, StandIn.cadence, StandIn.heartRate],
            hub: [
                "app": app, "appAt": 0, "subscribe": measurements + ["2a55"],
                "writes": [["at": 6, "characteristic": "2a55", "value": setCumulative]],
            ])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("hub.sqlite").path
        let record = try Cyclelog(
            [
                "record", "--bridge", "--plain", "--sensor", "Stages Power L", "--sensor", "Wahoo CADENCE",
                "--sensor", "Polar H10", "--db", database,
            ], standIn: standIn)
        // What the app heard on each characteristic, in order.
        func heard() throws -> [String: [String]] {
            var heard: [String: [String]] = [:]
            for words in try standIn.appLog(app) where words.count == 2 && words[0].hasPrefix("hub-") {
                heard[String(words[0].dropFirst(4)), default: []].append(words[1])
            }
            return heard
        }
        try await waitFor("the app hearing 40 powers, 10 heart rates and its write answered", record, seconds: 40) {
            let heard = try heard()
            return heard["2a63", default: []].count >= 40 && heard["2a37", default: []].count >= 10
                && heard["2a55"] != nil
        }
        record.signal(SIGTERM)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)

        let (replayed, written) = try hubReplay(database)
        XCTAssertEqual(written, [[app, "2a55", setCumulative]], "the app's write, in the journal")
        let received = try heard()
        // CSCS 1.0 §3.4: Response Code 0x10, the op code, Success (0x01); the live answer and the replay's.
        XCTAssertEqual(received["2a55"], ["100101"])
        XCTAssertEqual(replayed["2a55"], ["100101"])
        // The wheel counts on from the app's 1 000 000 once the hub carried the write out.
        let wheels = received["2a5b", default: []].compactMap(cumulativeWheelRevolutions)
        XCTAssertTrue(wheels.contains { $0 >= 1_000_000 }, "wheel revolutions heard: \(wheels.suffix(5))")
        for uuid in measurements {
            assertReplayed(received[uuid, default: []], in: replayed[uuid, default: []], uuid)
        }
    }
}

/// A CSC Measurement's cumulative wheel revolutions (CSCS 1.0 §3.1: flags bit 0, then a uint32), from its hex.
func cumulativeWheelRevolutions(_ hex: String) -> UInt32? {
    let bytes = stride(from: 0, to: hex.count, by: 2).compactMap { UInt8(hex.dropFirst($0).prefix(2), radix: 16) }
    guard bytes.count >= 5, bytes[0] & 1 == 1 else { return nil }
    return bytes[1...4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
}

/// What `show N --hub` makes again from ride `workoutId`'s stored journal: the values sent on each characteristic
/// (`hub-send` lines), in order, and the apps' writes (`hub-write`: the app, the characteristic, the value); the
/// trainer's holders (`hub-holder`) are left out.
func hubReplay(_ database: String, workoutId: Int = 1) throws -> (sent: [String: [String]], written: [[String]]) {
    let shown = try cyclelog(["show", String(workoutId), "--hub", "--db", database])
    XCTAssertEqual(shown.status, 0, shown.errorOutput)
    var sent: [String: [String]] = [:]
    var written: [[String]] = []
    for line in shown.output.split(separator: "\n") where !line.hasPrefix("#") {
        let words = line.split(separator: " ").map(String.init)
        switch words.dropFirst().first {
        case "hub-write": written.append(Array(words[2...]))
        case "hub-send":
            XCTAssertEqual(words.count, 4, "\(line)")
            if words.count == 4 { sent[words[2], default: []].append(words[3]) }
        default: XCTAssertTrue(words.count > 1 && words[1] == "hub-holder", "\(line)")
        }
    }
    return (sent, written)
}

/// The values an app received on characteristic `uuid` are a run of the replay's, in the same order, until one of
/// them ends (an app that connected mid-ride heard from somewhere in it; the hub goes on sending while the ride is
/// saved), with at least 10 to compare.
func assertReplayed(
    _ values: [String], in replay: [String], _ uuid: String, file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertGreaterThanOrEqual(
        values.count, 10, "\(uuid): the app heard too little to compare", file: file, line: line)
    // Where the app's first value is in the replay: the start whose run of equal values is longest (a strap's values
    // repeat).
    let runs = replay.indices.map { start in zip(replay[start...], values).prefix { $0 == $1 }.count }
    let start = runs.indices.max { runs[$0] < runs[$1] } ?? 0
    let overlap = min(values.count, replay.count - start)
    XCTAssertEqual(
        runs.isEmpty ? 0 : runs[start], overlap,
        "\(uuid): the app's values differ from the replay's after \(runs.isEmpty ? 0 : runs[start]) equal ones",
        file: file, line: line)
    XCTAssertGreaterThanOrEqual(
        overlap, 10, "\(uuid): \(values.count) received, \(replay.count) replayed", file: file, line: line)
}
