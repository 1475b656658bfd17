import Foundation
import StructuredWorkouts
import WorkoutStore
import XCTest

/// `cyclelog workouts`: the library (import, list, show, export, remove), the files it writes as Garmin's FIT SDK
/// reads them, and a structured ride's compliance rebuilt from its journal alone on a fresh database.
final class WorkoutLibraryTests: XCTestCase {
    static let zwo = """
        <workout_file>
          <name>Over-unders</name>
          <workout>
            <Warmup Duration="300" PowerLow="0.4" PowerHigh="0.7"/>
            <IntervalsT Repeat="3" OnDuration="120" OffDuration="60" OnPower="1.05" OffPower="0.85" Cadence="95"/>
            <Cooldown Duration="300" PowerLow="0.6" PowerHigh="0.4"/>
          </workout>
        </workout_file>
        """

    /// What FIT can hold is written (the description, heart-rate targets, as Garmin's SDK reads them back), and
    /// what it cannot is said at the export, not dropped silently.
    func testFITExportKeepsWhatFITHoldsAndSaysWhatItLeavesOut() throws {
        let database = try temporaryDatabase()
        let folder = (database as NSString).deletingLastPathComponent
        let workout = StructuredWorkout(
            name: "Heart and legs", author: "coach", description: "Two efforts by heart rate, then a ramp",
            steps: [
                WorkoutStep(.active, .seconds(600), .steady(.percent(80)), cadence: 90...95, heartRate: 140...150),
                WorkoutStep(.active, .seconds(300), .free, heartRate: 130...140),
                WorkoutStep(.cooldown, .seconds(300), .ramp(from: .percent(70), to: .percent(50))),
            ])
        // Stored as it is (a coach's plan, a file of another format may carry all of it).
        XCTAssertEqual(
            try WorkoutStore(path: database).importWorkout(
                workout, format: "zwo", fileName: "heart.zwo", sourceBytes: [], at: 0),
            .added(id: "heart-and-legs"))
        let fit = folder + "/out.fit"
        let exported = try cyclelog(["workouts", "export", "heart-and-legs", "-o", fit, "--db", database])
        XCTAssertEqual(exported.status, 0, exported.errorOutput)
        let read = try readExport("fit", fit)
        XCTAssertEqual(read["sdkErrors"] as? [String], [])
        XCTAssertEqual(
            (read["workouts"] as? [[String: Any]])?.first?["wkt_description"] as? String,
            "Two efforts by heart rate, then a ramp")
        let steps = try XCTUnwrap(read["workoutSteps"] as? [[String: Any]])
        // The free step's heart rate is its primary target: 130–140 bpm, as bpm + 100.
        XCTAssertEqual(steps[1]["target_type"] as? String, "heart_rate")
        XCTAssertEqual(steps[1]["custom_target_heart_rate_low"] as? Int, 230)
        XCTAssertEqual(steps[1]["custom_target_heart_rate_high"] as? Int, 240)
        // The first step holds power and cadence: FIT's two targets.
        XCTAssertEqual(steps[0]["secondary_target_type"] as? String, "cadence")
        let said = exported.errorOutput
        XCTAssertTrue(said.contains("out.fit leaves out what its format cannot hold"), said)
        XCTAssertTrue(said.contains("the author (FIT has no field for one)"), said)
        XCTAssertTrue(
            said.contains("heart-rate targets beside a power and a cadence target (FIT holds two a step) (1 step)"),
            said)
        XCTAssertTrue(said.contains("ramps, written as the range they span (FIT has no ramp) (1 step)"), said)
    }

    func testImportListShowExportAndRemove() throws {
        let database = try temporaryDatabase()
        let folder = (database as NSString).deletingLastPathComponent + "/workouts"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.zwo.write(toFile: folder + "/over-unders.zwo", atomically: true, encoding: .utf8)
        try "<workout_file><workout><Sprint Duration=\"30\"/></workout></workout_file>".write(
            toFile: folder + "/broken.zwo", atomically: true, encoding: .utf8)
        try "not a workout".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)

        let imported = try cyclelog(["workouts", "import", folder, "--db", database])
        XCTAssertEqual(imported.status, 1, "one file refused")
        XCTAssertTrue(
            imported.errorOutput.contains(
                "broken.zwo: <Sprint> on line 1: is not a workout step cyclelog knows"), imported.errorOutput)
        XCTAssertTrue(imported.errorOutput.contains("nothing was imported"), imported.errorOutput)
        XCTAssertTrue(imported.output.contains("over-unders  Over-unders  8 steps"), imported.output)

        let listed = try cyclelog(["workouts", "list", "--json", "--db", database]).lines.map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(
            listed.map { $0["id"] as? String },
            [
                "ramp-test", "ftp-test-20", "sweet-spot-2x20", "vo2max-5x5", "threshold-3x10", "endurance-1h",
                "hill-repeats", "recovery", "over-unders",
            ])
        // 300 + 3 × (120 + 60) + 300 s.
        XCTAssertEqual(listed.last?["durationSeconds"] as? Int, 1140)
        XCTAssertEqual(listed.last?["source"] as? String, "zwo")

        // The same workout from another file is kept once.
        let again = try cyclelog(["workouts", "import", folder + "/over-unders.zwo", "--db", database])
        XCTAssertEqual(again.status, 0, again.errorOutput)
        XCTAssertTrue(again.output.contains("over-unders  already in the library"), again.output)

        let shown = try cyclelog(["workouts", "show", "over-unders", "--ftp", "200", "--db", database])
        XCTAssertTrue(shown.output.contains("80 → 140 W"), shown.output)  // 40 % → 70 % of 200 W
        XCTAssertTrue(shown.output.contains("210 W"), shown.output)  // 105 %
        // Times as the summaries write them, in columns: each step's kind starts where the heading's does.
        let table = shown.output.split(separator: "\n").drop { !$0.contains("#  start") }
        let column = try XCTUnwrap(table.first?.range(of: "kind")).lowerBound.utf16Offset(in: table.first!)
        for row in table.dropFirst() where !row.contains("+") {
            let words = ["warmup", "active", "rest", "cooldown"]
            let offset = words.compactMap { row.range(of: "  \($0)  ") }.first.map {
                $0.lowerBound.utf16Offset(in: row) + 2
            }
            XCTAssertEqual(offset, column, String(row))
        }
        XCTAssertTrue(shown.output.contains("5:00") && !shown.output.contains("300s"), shown.output)
        // As JSON: every step, typed (Docs/reference/workout-text.md).
        let json = try cyclelog(["workouts", "show", "over-unders", "--json", "--db", database])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        XCTAssertEqual(object["id"] as? String, "over-unders")
        XCTAssertEqual(object["durationSeconds"] as? Int, 1140)
        let jsonSteps = try XCTUnwrap(object["steps"] as? [[String: Any]])
        XCTAssertEqual(jsonSteps.count, 8)
        XCTAssertEqual(jsonSteps[0]["intensity"] as? String, "warmup")
        XCTAssertEqual(jsonSteps[0]["seconds"] as? Int, 300)
        let ramp = try XCTUnwrap(jsonSteps[0]["power"] as? [String: Any])
        XCTAssertEqual(ramp["kind"] as? String, "ramp")
        XCTAssertEqual((ramp["from"] as? [String: Any])?["percentOfFTP"] as? Double, 40)
        XCTAssertEqual(jsonSteps[1]["cadenceRPM"] as? [Int], [95, 95])

        // Written as FIT: Garmin's SDK reads it without an error, with its steps and their targets.
        let fit = folder + "/out.fit"
        let exported = try cyclelog(["workouts", "export", "over-unders", "-o", fit, "--db", database])
        XCTAssertEqual(exported.status, 0, exported.errorOutput)
        let read = try readExport("fit", fit)
        XCTAssertEqual(read["integrity"] as? Bool, true)
        XCTAssertEqual(read["sdkErrors"] as? [String], [])
        let steps = try XCTUnwrap(read["workoutSteps"] as? [[String: Any]])
        XCTAssertEqual(steps.count, 8)
        XCTAssertEqual(steps.map { $0["duration_time"] as? Double }, [300, 120, 60, 120, 60, 120, 60, 300])
        XCTAssertEqual(steps.map { $0["intensity"] as? String }.prefix(3), ["warmup", "active", "rest"])
        // FIT has no ramp: the warm-up spans 40–70 %; a share of FTP is written as a whole percent (≤ 1000).
        XCTAssertEqual(steps[0]["custom_target_power_low"] as? Int, 40)
        XCTAssertEqual(steps[0]["custom_target_power_high"] as? Int, 70)
        XCTAssertEqual(steps[1]["custom_target_power_low"] as? Int, 105)
        XCTAssertEqual(steps[1]["secondary_custom_target_cadence_low"] as? Int, 95)
        XCTAssertEqual((read["workouts"] as? [[String: Any]])?.first?["num_valid_steps"] as? Int, 8)

        // Written as .zwo and imported: the same steps, so the library already has it.
        let zwo = folder + "/out.zwo"
        XCTAssertEqual(try cyclelog(["workouts", "export", "over-unders", "-o", zwo, "--db", database]).status, 0)
        let back = try cyclelog(["workouts", "import", zwo, "--db", database])
        XCTAssertTrue(back.output.contains("over-unders  already in the library"), back.output + back.errorOutput)

        // A preset may name a workout of the library, and no other.
        let preset = try cyclelog([
            "presets", "add", "ou", "--title", "Over-unders", "--workout", "over-unders", "--db", database,
        ])
        XCTAssertEqual(preset.status, 0, preset.errorOutput)
        let missing = try cyclelog(["presets", "add", "x", "--title", "X", "--workout", "no-such", "--db", database])
        // An unknown workout is one mistake, said one way with one status (1) wherever it is named.
        let unknown = "cyclelog: there is no workout 'no-such' in the library; `cyclelog workouts list` shows them\n"
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.errorOutput, unknown)
        for verb in [["show", "no-such"], ["export", "no-such", "-o", folder + "/x.fit"], ["remove", "no-such"]] {
            let run = try cyclelog(["workouts"] + verb + ["--db", database])
            XCTAssertEqual(run.status, 1, "\(verb)")
            XCTAssertEqual(run.errorOutput, unknown, "\(verb)")
        }

        let builtIn = try cyclelog(["workouts", "remove", "recovery", "--db", database])
        XCTAssertEqual(builtIn.status, 1)
        XCTAssertTrue(builtIn.errorOutput.contains("recovery is built in and cannot be removed"), builtIn.errorOutput)
        XCTAssertEqual(try cyclelog(["workouts", "remove", "over-unders", "--db", database]).status, 0)
        XCTAssertEqual(try cyclelog(["workouts", "list", "--db", database]).lines.count, 8)
    }

    /// A journal of a structured ride: a power meter's notifications, 1 a second, at 200 W for the first minute
    /// and 270 W for the second, then 150 W; the workout asks 80 % and 120 % of 250 W, then a free minute.
    static func structuredJournal() -> String {
        let sensor = "C0:11:22:33:44:55"
        func time(_ second: Int) -> String {
            String(format: "2026-11-01T08:%02d:%02d.000000Z", second / 60, second % 60)
        }
        let workout =
            "# cyclelog workout 1\\nname Test\\nstep warmup 60s 80%\\nstep active 60s 120%\\nstep active 60s free\\n"
        var lines = [
            "# cyclelog journal 1", "\(time(0)) connect \(sensor) Meter", "\(time(0)) workout ftp=250 \(workout)",
            "\(time(1)) start name=Structured",
        ]
        for second in 2..<184 {
            let watts = second < 62 ? 200 : second < 122 ? 270 : 150
            // Flags 0x0020 (crank data), power, crank revolutions, last crank event (1/1024 s): 60 rpm.
            let bytes: [UInt16] = [0x20, UInt16(watts), UInt16(second), UInt16(truncatingIfNeeded: second * 1024)]
            let hex = bytes.map { String(format: "%02x%02x", $0 & 0xFF, $0 >> 8) }.joined()
            lines.append("\(time(second)) notify \(sensor) 2a63 \(hex)")
        }
        lines.append("\(time(184)) end")
        return lines.joined(separator: "\n") + "\n"
    }

    func testAStructuredRideGivesTheSameComplianceFromItsJournalOnAFreshDatabase() throws {
        let database = try temporaryDatabase()
        let folder = (database as NSString).deletingLastPathComponent
        let journal = folder + "/structured.journal"
        try Self.structuredJournal().write(toFile: journal, atomically: true, encoding: .utf8)
        XCTAssertEqual(try cyclelog(["replay", journal, "--db", database]).status, 0)
        func plan(_ database: String) throws -> [String: Any] {
            let shown = try cyclelog(["show", "1", "--json", "--db", database])
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(shown.output.utf8)) as? [String: Any])
            XCTAssertEqual((json["laps"] as? [Any])?.count, 3, "a lap per step")
            return try XCTUnwrap(json["plan"] as? [String: Any], shown.output)
        }
        let first = try plan(database)
        XCTAssertEqual(first["workout"] as? String, "Test")
        XCTAssertEqual(first["ftpWatts"] as? Int, 250)
        XCTAssertEqual(first["completed"] as? Bool, true)
        let steps = try XCTUnwrap(first["steps"] as? [[String: Any]])
        XCTAssertEqual(steps.map { $0["meanTargetWatts"] as? Double }, [200, 300, nil])
        XCTAssertEqual(steps.map { $0["runningSeconds"] as? Int }, [60, 60, 60])
        // 200 W against 200 W; 270 W is 10 % under 300 W (outside ±5 %).
        XCTAssertEqual(steps[0]["compliancePercent"] as? Double, 100)
        XCTAssertEqual(steps[1]["compliancePercent"] as? Double, 0)
        XCTAssertNil(steps[2]["compliancePercent"] as? Double)

        // The chart shades each step's target under the power: 200 W for the first minute, 300 W for the second.
        let chart = folder + "/structured.svg"
        XCTAssertEqual(try cyclelog(["chart", "1", "-o", chart, "--db", database]).status, 0)
        let svg = try String(contentsOfFile: chart, encoding: .utf8)
        XCTAssertTrue(svg.contains("pale red: the target of Test"), svg)
        XCTAssertEqual(svg.components(separatedBy: "<polygon ").count - 1, 2, "two steps with a target")

        // The stored journal alone, on a fresh database (no library there), gives the same table.
        let stored = try cyclelog(["show", "1", "--journal", "--db", database])
        let copy = folder + "/copy.journal"
        try stored.output.write(toFile: copy, atomically: true, encoding: .utf8)
        let fresh = try temporaryDatabase()
        XCTAssertEqual(try cyclelog(["replay", copy, "--db", fresh]).status, 0)
        XCTAssertEqual(
            try JSONSerialization.data(withJSONObject: try plan(fresh), options: .sortedKeys),
            try JSONSerialization.data(withJSONObject: first, options: .sortedKeys))
    }
}
