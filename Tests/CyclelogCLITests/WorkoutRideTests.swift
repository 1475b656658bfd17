import Foundation
import RecorderInterface
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// Riding a structured workout live, over a private D-Bus with the stand-in's trainer: its targets written to the
/// trainer as the steps pass, the player's controls from the command line, the status, the ride's compliance,
/// and the same compliance from the ride's journal alone on a fresh database.
final class WorkoutRideTests: XCTestCase {
    /// Three 8-second steps at 50 %, 100 % and 75 % of FTP, then a free minute.
    static let short = """
        <workout_file>
          <name>Short</name>
          <workout>
            <SteadyState Duration="8" Power="0.5"/>
            <SteadyState Duration="8" Power="1.0"/>
            <SteadyState Duration="8" Power="0.75"/>
            <FreeRide Duration="60"/>
          </workout>
        </workout_file>
        """

    private func importShort(_ database: String) throws {
        let file = (database as NSString).deletingLastPathComponent + "/short.zwo"
        try Self.short.write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try cyclelog(["workouts", "import", file, "--db", database])
        XCTAssertEqual(imported.status, 0, imported.errorOutput)
    }

    private func status(_ standIn: StandIn) throws -> [String: Any] {
        let command = try Cyclelog(["status", "--json"], standIn: standIn)
        guard command.wait(seconds: 20) == 0 else { return [:] }
        return try JSONSerialization.jsonObject(with: Data(command.output.utf8)) as? [String: Any] ?? [:]
    }

    func testTheWorkoutDrivesTheTrainerStepByStepAndTheRiderSkipsAndScalesIt() async throws {
        let standIn = try StandIn(sensors: [StandIn.trainer()])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("workout.sqlite").path
        try importShort(database)
        let record = try Cyclelog(
            ["record", "--plain", "--db", database, "--sensor", "KICKR", "--workout", "short", "--ftp", "200"],
            standIn: standIn)
        try await waitFor("the recorder on the bus", record) {
            try await standIn.busNameOwner(RecorderControl.busName) != nil
        }
        // 50 % of 200 W: 100 W (05 64 00), then 100 % (05 C8 00) once 8 s have been ridden.
        try await waitFor("100 W written", record, seconds: 30) { try standIn.writes().contains([0x05, 0x64, 0x00]) }
        let first = try status(standIn)
        XCTAssertEqual(first["WorkoutPlanId"] as? String, "short")
        XCTAssertEqual(first["StepCount"] as? Int, 4)
        XCTAssertEqual(first["IntensityPercent"] as? Int, 100)
        try await waitFor("200 W written", record, seconds: 30) { try standIn.writes().contains([0x05, 0xC8, 0x00]) }
        // Skip the 200 W step: 75 % of 200 W is 150 W (05 96 00); at 90 %, 135 W (05 87 00).
        let skip = try Cyclelog(["skip"], standIn: standIn)
        XCTAssertEqual(skip.wait(seconds: 20), 0, skip.output)
        XCTAssertTrue(skip.output.contains("Workout Short: step 3 of 4, 150 W"), skip.output)
        try await waitFor("150 W written", record, seconds: 30) { try standIn.writes().contains([0x05, 0x96, 0x00]) }
        let easier = try Cyclelog(["intensity", "-10"], standIn: standIn)
        XCTAssertEqual(easier.wait(seconds: 20), 0, easier.output)
        XCTAssertTrue(easier.output.contains("135 W"), easier.output)
        try await waitFor("135 W written", record, seconds: 30) { try standIn.writes().contains([0x05, 0x87, 0x00]) }
        // The free ride lets the trainer go (Reset), and the workout says so.
        try await waitFor("the free step", record, seconds: 30) { try self.status(standIn)["StepIndex"] as? Int == 3 }
        try await waitFor("the trainer let go", record, seconds: 30) { try standIn.writes().last == [0x01] }
        let extend = try Cyclelog(["extend", "1m"], standIn: standIn)
        XCTAssertEqual(extend.wait(seconds: 20), 0, extend.output)
        XCTAssertTrue(extend.output.contains("step 4 of 4, no target"), extend.output)
        try await waitFor("3 s of the free ride", record, seconds: 30) {
            (try self.status(standIn)["StepSecondsLeft"] as? Double ?? 120) <= 116
        }
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)

        // The journal: the workout, then the rider's controls, in order.
        let store = try WorkoutStore(path: database)
        let id = try XCTUnwrap(store.list().first?.id)
        let journal = try store.journal(id)
        XCTAssertEqual(
            journal.compactMap { if case .setting(.workout(let planned)) = $0.kind { planned.ftpWatts } else { nil } },
            [200])
        XCTAssertEqual(
            journal.compactMap { if case .setting(.player(let control)) = $0.kind { control.words } else { nil } },
            ["skip", "intensity 90", "extend 60"])
        let show = try Cyclelog(["show", "last", "--json", "--db", database], standIn: standIn)
        XCTAssertEqual(show.wait(seconds: 20), 0, show.output)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(show.output.utf8)) as? [String: Any])
        let plan = try XCTUnwrap(summary["plan"] as? [String: Any], show.output)
        let steps = try XCTUnwrap(plan["steps"] as? [[String: Any]])
        // As ridden: the 200 W step was skipped within its first second or two (none of it, or a second or two,
        // depending on where the skip fell in the ride's second), the others in order.
        let ridden = steps.filter { $0["step"] as? Int != 2 || ($0["runningSeconds"] as? Int ?? 0) > 2 }
        XCTAssertEqual(ridden.map { $0["step"] as? Int }, [1, 3, 4], show.output)
        guard ridden.count == 3 else { return }
        XCTAssertEqual(ridden[0]["runningSeconds"] as? Int, 8)
        XCTAssertEqual(steps[0]["meanTargetWatts"] as? Double, 100)
        // The trainer follows its target within a second or two: most of an 8-second step is within ±10 W.
        XCTAssertGreaterThanOrEqual(steps[0]["compliancePercent"] as? Double ?? 0, 50, show.output)
        XCTAssertEqual(ridden[1]["meanTargetWatts"] as? Double ?? 0, 135, accuracy: 15, "150 W, then 135 W")
        XCTAssertNil(ridden[2]["meanTargetWatts"] as? Double, "a free ride has no target")

        // The journal alone, on a fresh database: the same compliance.
        let text = try Cyclelog(["show", "last", "--journal", "--db", database], standIn: standIn)
        XCTAssertEqual(text.wait(seconds: 20), 0)
        let copy = standIn.bus.folder.appendingPathComponent("copy.journal").path
        try text.output.write(toFile: copy, atomically: true, encoding: .utf8)
        let fresh = standIn.bus.folder.appendingPathComponent("fresh.sqlite").path
        let replay = try Cyclelog(["replay", copy, "--db", fresh], standIn: standIn)
        XCTAssertEqual(replay.wait(seconds: 60), 0, replay.output)
        let again = try Cyclelog(["show", "last", "--json", "--db", fresh], standIn: standIn)
        XCTAssertEqual(again.wait(seconds: 20), 0)
        let replayed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any])
        XCTAssertEqual(
            try JSONSerialization.data(withJSONObject: replayed["plan"] as Any, options: .sortedKeys),
            try JSONSerialization.data(withJSONObject: plan, options: .sortedKeys))
    }

    func testWithoutATrainerTheTargetsAreShownAndTheControlsRefusedWithoutAWorkout() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("meter.sqlite").path
        try importShort(database)
        let record = try Cyclelog(
            [
                "record", "--plain", "--db", database, "--sensor", "Stages Power L", "--workout", "short", "--ftp",
                "300",
            ],
            standIn: standIn)
        try await waitFor("the recorder on the bus", record) {
            try await standIn.busNameOwner(RecorderControl.busName) != nil
        }
        try await waitFor("the first step's target", record, seconds: 30) {
            try self.status(standIn)["TargetPowerWatts"] as? Double == 150
        }
        XCTAssertEqual(try status(standIn)["NextTargetPowerWatts"] as? Double, 300)
        XCTAssertEqual(try status(standIn)["TrainerState"] as? String, "")
        // The rider follows the numbers on a meter: the second step's target, then its compliance.
        try await waitFor("the second step", record, seconds: 30) {
            try self.status(standIn)["StepIndex"] as? Int == 1
        }
        XCTAssertEqual(try status(standIn)["TargetPowerWatts"] as? Double, 300)
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)
        XCTAssertTrue(record.output.contains("step 1 of 4: 0:08 at 150 W"), record.output)
        XCTAssertTrue(record.output.contains("step 2 of 4: 0:08 at 300 W"), record.output)
        let show = try Cyclelog(["show", "last", "--json", "--db", database], standIn: standIn)
        XCTAssertEqual(show.wait(seconds: 20), 0, show.output)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(show.output.utf8)) as? [String: Any])
        let steps = try XCTUnwrap((summary["plan"] as? [String: Any])?["steps"] as? [[String: Any]], show.output)
        XCTAssertEqual(steps.first?["meanTargetWatts"] as? Double, 150)
        XCTAssertNotNil(steps.first?["compliancePercent"] as? Double, "the meter's power against the target")

        // With no recorder riding a workout, the controls say so.
        let plain = try Cyclelog(
            ["record", "--plain", "--db", database, "--sensor", "Stages Power L"], standIn: standIn)
        try await waitFor("the recorder on the bus", plain) {
            try await standIn.busNameOwner(RecorderControl.busName) != nil
        }
        try await waitFor("riding", plain, seconds: 30) { try self.status(standIn)["State"] as? String == "running" }
        let skip = try Cyclelog(["skip"], standIn: standIn)
        XCTAssertEqual(skip.wait(seconds: 20), 1, skip.output)
        XCTAssertTrue(skip.output.contains("no structured workout is being ridden"), skip.output)
        plain.signal(SIGINT)
        XCTAssertEqual(plain.wait(seconds: 30), 0, plain.output)
    }
}
