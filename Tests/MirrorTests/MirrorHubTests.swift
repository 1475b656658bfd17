import DBus
import Foundation
import RecorderInterface
import Synchronization
import Workouts
import XCTest

@testable import Mirror

/// The mirror's hub and device registry on their own: a slow screen loses `live` values but never an event and
/// never holds up another screen; offers expire after 120 s and tokens are stored only as hashes.
final class MirrorHubTests: XCTestCase {
    /// The snapshot lists every property the recorder publishes once, in the reference's order, and nothing else.
    func testTheSnapshotHasEveryRecorderPropertyOnce() {
        let listed = MirrorHub.snapshot.compactMap { if case .property(let name) = $0 { name } else { nil } }
        let can = RecorderStatus.properties.map(\.name).filter { $0.hasPrefix("Can") }
        XCTAssertEqual(can, ["CanStart", "CanPause", "CanResume", "CanLap", "CanEnd", "CanCancel"])
        XCTAssertEqual(listed.count, Set(listed).count, "a property listed twice")
        XCTAssertEqual(Set(listed + can), Set(RecorderStatus.properties.map(\.name)))
        let keys = MirrorHub.fields(nil, instantaneousPowerWatts: nil, Set(DataType.allCases)).map(\.0)
        // Docs/reference/http-api.md, "The snapshot".
        XCTAssertEqual(
            keys,
            [
                "state", "workoutId", "name", "location", "goal", "goalProgress", "elapsedSeconds", "movingSeconds",
                "powerWatts", "instantaneousPowerWatts", "cadenceRPM", "speedMetersPerSecond", "heartRateBPM",
                "distanceMeters", "workJoules", "lap", "lapElapsedSeconds", "waterMillilitres", "controlSequence",
                "can", "sensors", "suggestedWorkouts", "trainerMode", "trainerState", "targetPowerWatts",
                "gradePercent", "resistanceLevel", "powerMatchOffsetWatts", "trainerMessage", "trainerHolder",
                "hubApps", "workoutPlanId", "workoutPlanName", "stepIndex", "stepCount", "stepSecondsLeft", "stepName",
                "targetRangeLowWatts", "targetRangeHighWatts", "nextTargetPowerWatts", "intensityPercent",
                "workoutProfile", "undoId", "undoAction", "undoType", "undoSecondsLeft",
            ])
    }

    func testASlowScreenLosesLiveValuesButNoEventAndDelaysNobody() async throws {
        let hub = MirrorHub(maximumClients: 2)
        await hub.apply(.appeared(RecorderStatus(values: ["State": .string("running"), "WorkoutId": .int64(3)])))
        let first = await hub.subscribe(device: "a", types: DataType.control, lastEventID: nil)
        let second = await hub.subscribe(device: "b", types: DataType.control, lastEventID: nil)
        let third = await hub.subscribe(device: "c", types: DataType.control, lastEventID: nil)
        let slow = try XCTUnwrap(first), fast = try XCTUnwrap(second)
        XCTAssertNil(third, "a third screen beyond --max-clients")
        _ = await slow.next()  // the snapshots
        _ = await fast.next()

        var fastLive = 0
        for watts in 1...200 {
            await hub.apply(.live(["seq": .uint64(UInt64(watts)), "powerWatts": .double(Double(watts))]))
            // The fast screen reads each value as it comes.
            if let message = await fast.next(), message.hasPrefix("event: live") { fastLive += 1 }
        }
        await hub.apply(.event(["kind": .string("lap"), "workoutId": .int64(3), "controlSequence": .uint64(2)]))
        await hub.flushStatus()
        XCTAssertEqual(fastLive, 200, "the fast screen got every value, whatever the slow one did")

        var kinds: [String] = []
        while kinds.last != "snapshot", let message = await slow.next() {
            kinds.append(String(message.split(separator: "\n").first { $0.hasPrefix("event: ") }?.dropFirst(7) ?? ""))
        }
        XCTAssertEqual(kinds.filter { $0 == "live" }.count, StreamClient.liveLimit, "live values kept for the slow one")
        XCTAssertEqual(kinds.suffix(2), ["event", "snapshot"], "the lap arrives, then a snapshot for what was lost")
        let status = await hub.status(DataType.control)
        XCTAssertNotNil(status)
    }

    func testPairingOffersExpireAndOnlyHashesAreStored() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mirror-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = Clock()
        let registry = try DeviceRegistry(file: folder.appendingPathComponent("devices.json"), now: { clock.now })
        let offer = try await registry.offer(name: "phone", types: DataType.control, token: false)
        XCTAssertEqual(offer.code.count, 6)
        XCTAssertEqual(offer.code.allSatisfy(\.isNumber), true)
        clock.advance(by: 121)
        do {
            _ = try await registry.pair(code: offer.code, name: nil)
            XCTFail("a code paired after 120 s")
        } catch {
            XCTAssertEqual(error as? DeviceRegistry.PairingFailure, .wrong)
        }
        let fresh = try await registry.offer(name: "phone", types: DataType.read, token: false)
        clock.advance(by: 119)
        let (token, device) = try await registry.pair(oneTimeToken: fresh.oneTimeToken)
        XCTAssertEqual(device.types, DataType.read)
        // 256 bits, base64url: 43 characters.
        XCTAssertEqual(token.count, 43)
        XCTAssertEqual(device.tokenSHA256, DeviceRegistry.sha256(token))
        let stored = try String(contentsOf: folder.appendingPathComponent("devices.json"), encoding: .utf8)
        XCTAssertFalse(stored.contains(token))
        let reread = try DeviceRegistry(file: folder.appendingPathComponent("devices.json"))
        let known = await reread.device(token: token), unknown = await reread.device(token: String(token.dropLast()))
        XCTAssertEqual(known?.name, "phone")
        XCTAssertNil(unknown)
    }
}

/// A clock the test moves by hand.
private final class Clock: Sendable {
    private let seconds = Mutex(0.0)
    var now: Date { Date(timeIntervalSince1970: 1_800_000_000 + seconds.withLock { $0 }) }
    func advance(by interval: Double) { seconds.withLock { $0 += interval } }
}
