import DBus
import Foundation
import RecorderInterface
import Workouts
import XCTest

@testable import Mirror

/// Data types and grants on their own: the words a rider types, a registry that keeps grants (and reads the
/// scopes of before), and a hub that writes each screen only what its device was granted.
final class DataGrantTests: XCTestCase {
    func testTheWordsARiderTypes() throws {
        XCTAssertEqual(try DataType.list("power,cadence").get(), [.power, .cadence])
        // Heart rate is given only when named: neither shorthand holds it.
        XCTAssertFalse(DataType.read.contains(.hr))
        XCTAssertFalse(DataType.control.contains(.hr))
        XCTAssertEqual(try DataType.list("control, hr").get(), DataType.control.union([.hr]))
        XCTAssertEqual(try DataType.list("heart-rate").get(), [.hr])
        XCTAssertEqual(DataType.list("power,pulse"), .failure(DataType.ListError(word: "pulse")))
        XCTAssertEqual(DataType.list(""), .failure(DataType.ListError(word: "")))
        let changes = try DataType.changes("+hr,-cadence,power").get()
        XCTAssertEqual(changes.add, [.hr, .power])
        XCTAssertEqual(changes.remove, [.cadence])
        // The last word about a type holds.
        XCTAssertEqual(try DataType.changes("+hr,-hr").get().add, [])
        XCTAssertEqual(DataType.text([.hr, .power, .history]), "power,hr,history")
    }

    func testGrantsAreKeptAndTheScopesOfBeforeReadAsTheirShorthands() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("grants-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("devices.json")
        // A file written before types: two devices with the scopes of then.
        try Data(
            """
            [{"name": "wall", "scope": "read", "tokenSHA256": "\(String(repeating: "a", count: 64))",
              "created": "2026-01-01T00:00:00Z"},
             {"name": "phone", "scope": "control", "tokenSHA256": "\(String(repeating: "b", count: 64))",
              "created": "2026-01-01T00:00:00Z"}]
            """.utf8
        ).write(to: file)
        let registry = try DeviceRegistry(file: file)
        let before = await registry.all
        XCTAssertEqual(before.map(\.types), [DataType.read, DataType.control])

        let changed = try await registry.grant(name: "phone", adding: [.hr], removing: [.trainer])
        XCTAssertEqual(changed.map(\.types), [DataType.control.union([.hr]).subtracting([.trainer])])
        let nobody = try await registry.grant(name: "nobody", adding: [.hr], removing: [])
        XCTAssertEqual(nobody.count, 0)
        let reread = try DeviceRegistry(file: file)
        let after = await reread.all
        XCTAssertEqual(after.first { $0.name == "phone" }?.types, DataType.control.union([.hr]).subtracting([.trainer]))
        XCTAssertEqual(after.first { $0.name == "wall" }?.types, DataType.read)
        let text = try String(contentsOf: file, encoding: .utf8)
        XCTAssertFalse(text.contains("scope"), "written as types from then on: \(text)")

        // A page asks for more than was offered: it gets the offer's part, and what it asked beyond is noted.
        let offer = try await registry.offer(name: "tablet", types: [.power, .cadence], token: false)
        let (_, device) = try await registry.pair(code: offer.code, name: nil, asking: DataType.control.union([.hr]))
        XCTAssertEqual(device.types, [.power, .cadence])
        XCTAssertEqual(device.asked, DataType.control.union([.hr]).subtracting([.power, .cadence]))
        let granted = try await registry.grant(name: device.id, adding: [.hr], removing: [])
        XCTAssertEqual(granted.first?.asked.contains(.hr), false, "given, so no longer asked")
    }

    /// Two screens on one hub, one granted heart rate and one not: every kind of message each is written.
    func testEachScreenIsWrittenOnlyWhatItWasGrantedAndAChangeIsAtOnce() async throws {
        let hub = MirrorHub()
        await hub.apply(
            .appeared(
                RecorderStatus(values: [
                    "State": .string("running"), "WorkoutId": .int64(3), "PowerWatts": .double(212),
                    "HeartRateBPM": .double(151), "CadenceRPM": .double(88), "WaterMillilitres": .double(250),
                ])))
        let everything = DataType.control.union([.hr])
        let subscribedAll = await hub.subscribe(device: "all", types: everything, lastEventID: nil)
        let subscribedWall = await hub.subscribe(device: "wall", types: [.power], lastEventID: nil)
        let all = try XCTUnwrap(subscribedAll), wall = try XCTUnwrap(subscribedWall)
        let firstToAll = await all.next(), firstToWall = await wall.next()
        let allSnapshot = try XCTUnwrap(firstToAll), wallSnapshot = try XCTUnwrap(firstToWall)
        XCTAssertTrue(allSnapshot.contains("\"heartRateBPM\": 151"), allSnapshot)
        XCTAssertTrue(allSnapshot.contains("\"waterMillilitres\": 250"), allSnapshot)
        XCTAssertTrue(wallSnapshot.contains("\"powerWatts\": 212"), wallSnapshot)
        for key in ["heartRateBPM", "cadenceRPM", "waterMillilitres", "speedMetersPerSecond", "workJoules"] {
            XCTAssertFalse(wallSnapshot.contains("\"\(key)\""), "\(key) reached the wall: \(wallSnapshot)")
        }
        XCTAssertTrue(wallSnapshot.contains("\"types\": [\"power\"]"), wallSnapshot)

        // A strap's reading alone: to the one screen given heart rate; nothing at all to the other. A meter's
        // reading with cadence: the power alone to the wall.
        await hub.apply(.live(["seq": .uint64(1), "sensor": .string("strap"), "heartRateBPM": .double(152)]))
        await hub.apply(
            .live([
                "seq": .uint64(2), "sensor": .string("meter"), "powerWatts": .double(230), "cadenceRPM": .double(90),
                "shown": .array(elementSignature: "s", [.string("powerWatts"), .string("cadenceRPM")]),
            ]))
        // Water logged: an intake event, not for the wall; a lap is.
        await hub.apply(.event(["kind": .string("intake"), "amount": .double(250), "controlSequence": .uint64(4)]))
        await hub.apply(.event(["kind": .string("lap"), "controlSequence": .uint64(5)]))
        await hub.apply(.changed(["HeartRateBPM": .double(153), "PowerWatts": .double(220)]))
        await hub.flushStatus()

        let toAll = [await all.next(), await all.next(), await all.next(), await all.next(), await all.next()]
        XCTAssertTrue(toAll[0]?.contains("\"heartRateBPM\": 152") == true, "\(toAll)")
        XCTAssertTrue(toAll[1]?.contains("\"cadenceRPM\": 90") == true, "\(toAll)")
        XCTAssertTrue(toAll[2]?.contains("\"kind\": \"intake\"") == true, "\(toAll)")
        XCTAssertTrue(toAll[4]?.contains("\"heartRateBPM\": 153") == true, "\(toAll)")
        let toWall = [await wall.next(), await wall.next(), await wall.next()]
        XCTAssertEqual(toWall[0]?.hasPrefix("event: live"), true, "\(toWall)")
        XCTAssertTrue(toWall[0]?.contains("\"powerWatts\": 230") == true, "\(toWall)")
        XCTAssertTrue(toWall[0]?.contains("\"shown\": [\"powerWatts\"]") == true, "\(toWall)")
        XCTAssertTrue(toWall[1]?.contains("\"kind\": \"lap\"") == true, "\(toWall)")
        XCTAssertEqual(toWall[2]?.hasPrefix("event: status"), true, "\(toWall)")
        XCTAssertTrue(toWall[2]?.contains("\"powerWatts\": 220") == true, "\(toWall)")
        for message in toWall.compactMap({ $0 }) {
            XCTAssertFalse(message.contains("heartRate") || message.contains("cadence") || message.contains("intake"))
        }

        // Heart rate granted on the open stream: a snapshot with it comes at once; taken again, one without.
        await hub.grant(device: "wall", types: [.power, .hr])
        let grantedMessage = await wall.next()
        let granted = try XCTUnwrap(grantedMessage)
        XCTAssertTrue(granted.hasPrefix("id: ") && granted.contains("event: snapshot"), granted)
        XCTAssertTrue(granted.contains("\"heartRateBPM\": 153"), granted)
        await hub.apply(.live(["seq": .uint64(3), "sensor": .string("strap"), "heartRateBPM": .double(154)]))
        let withHeartRate = await wall.next()
        XCTAssertTrue(withHeartRate?.contains("\"heartRateBPM\": 154") == true, "\(withHeartRate ?? "")")
        await hub.grant(device: "wall", types: [.power])
        let takenMessage = await wall.next()
        let taken = try XCTUnwrap(takenMessage)
        XCTAssertFalse(taken.contains("heartRate"), taken)
        await hub.apply(.live(["seq": .uint64(4), "sensor": .string("strap"), "heartRateBPM": .double(155)]))
        await hub.apply(.event(["kind": .string("lap"), "controlSequence": .uint64(6)]))
        let lap = await wall.next()
        XCTAssertTrue(lap?.contains("\"kind\": \"lap\"") == true, "the strap's value was skipped: \(lap ?? "")")

        // A screen that reconnects is replayed only the events of its types.
        let subscribedAgain = await hub.subscribe(device: "wall", types: [.power], lastEventID: nil)
        let again = try XCTUnwrap(subscribedAgain)
        _ = await again.next()
        let status = await hub.status([.power])
        XCTAssertNotNil(status)
        XCTAssertFalse(status?.rendered().contains("heartRate") ?? true)
    }

    /// A stream whose request read its device just before the grant changed opens with the new grant.
    func testAStreamOpenedAsTheGrantChangesOpensWithTheNewOne() async throws {
        let hub = MirrorHub()
        await hub.apply(.appeared(RecorderStatus(values: ["State": .string("running"), "HeartRateBPM": .double(140)])))
        await hub.grant(device: "wall", types: [.power, .hr])
        let subscribed = await hub.subscribe(device: "wall", types: [.power], lastEventID: nil)
        let snapshot = await subscribed?.next()
        XCTAssertTrue(snapshot?.contains("\"heartRateBPM\": 140") == true, snapshot ?? "")
        await hub.grant(device: "wall", types: [.power])
        let again = await hub.subscribe(device: "wall", types: [.power, .hr], lastEventID: nil)
        let withheld = await again?.next()
        XCTAssertFalse(withheld?.contains("heartRate") ?? true, withheld ?? "")
    }

    func testEachCommandNeedsItsType() throws {
        func type(_ name: String, _ arguments: [String: DBusValue] = [:]) throws -> DataType {
            try RecorderCommand(name: name, arguments: arguments).dataType
        }
        XCTAssertEqual(try type("lap"), .ride)
        XCTAssertEqual(try type("start"), .ride)
        XCTAssertEqual(try type("skip"), .ride)
        XCTAssertEqual(
            try type("intake", ["kind": .string("water"), "amount": .double(250), "unit": .string("ml")]), .intake)
        XCTAssertEqual(try type("target", ["watts": .double(200)]), .trainer)
    }
}
