import Foundation
import GRDB
import StructuredWorkouts
import WorkoutFiles
import XCTest

/// Hostile workout files at `cyclelog workouts import`: each refused in words before it is stored, and the library
/// readable after every refusal; a row an older cyclelog stored beyond the bounds hides none of the others.
final class HostileWorkoutTests: XCTestCase {
    func steps(_ count: Int) -> [WorkoutStep] {
        Array(repeating: WorkoutStep(.active, .seconds(60), .steady(.percent(80))), count: count)
    }

    func testEveryRefusalLeavesTheLibraryReadable() throws {
        let database = try temporaryDatabase()
        let folder = (database as NSString).deletingLastPathComponent + "/hostile"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let files: [(String, [UInt8], String)] = [
            (
                "plain-steps.fit",
                FITWorkoutFile.write(
                    StructuredWorkout(name: "Too many", steps: steps(10_001)), createdMicroseconds: 0),
                "more than 10000 steps: a workout has at most 10000"
            ),
            (
                "huge.zwo", Array("<workout_file><description>".utf8) + Array(repeating: 0x61, count: 6_000_000),
                "is 6.0 MB; a workout file is at most 4.0 MB"
            ),
            (
                "long-description.zwo",
                Array(
                    ("<workout_file><name>x</name><description>" + String(repeating: "d", count: 20_000)
                        + "</description><workout><SteadyState Duration=\"60\" Power=\"0.8\"/></workout>"
                        + "</workout_file>").utf8),
                "the text of <description> is longer than any text of a workout may be (10.0 KB)"
            ),
            (
                "entities.zwo",
                Array("<!DOCTYPE a [<!ENTITY b \"c\">]><workout_file><name>&b;</name></workout_file>".utf8),
                "a DOCTYPE or an entity declaration is not accepted"
            ),
        ]
        for (name, bytes, reason) in files {
            _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(bytes))
            let imported = try cyclelog(["workouts", "import", folder + "/" + name, "--db", database])
            XCTAssertEqual(imported.status, 1, name)
            XCTAssertTrue(imported.errorOutput.contains(reason), imported.errorOutput)
            XCTAssertTrue(imported.errorOutput.contains("nothing was imported"), imported.errorOutput)
            let listed = try cyclelog(["workouts", "list", "--json", "--db", database])
            XCTAssertEqual(listed.status, 0, listed.errorOutput)
            XCTAssertEqual(listed.lines.count, 8, "the built-in workouts, nothing of \(name)")
        }
    }

    func testARowBeyondTheBoundsIsSaidAndHidesNoOther() throws {
        let database = try temporaryDatabase()
        let file = (database as NSString).deletingLastPathComponent + "/fine.zwo"
        try WorkoutLibraryTests.zwo.write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try cyclelog(["workouts", "import", file, "--db", database]).status, 0)
        // What an older cyclelog stored: a workout of 10 001 plain steps (its FIT reader counted repeats only), and
        // one whose text is larger than any workout may be.
        let queue = try DatabaseQueue(path: database)
        let tooMany = WorkoutText.text(StructuredWorkout(name: "Too many", steps: steps(10_001)))
        let tooLarge = WorkoutText.header + "\nname Big\ndescription " + String(repeating: "d", count: 5_000_000)
        try queue.write { db in
            for (id, text) in [("too-many", tooMany), ("too-large", tooLarge)] {
                try db.execute(
                    sql: """
                        INSERT INTO libraryWorkout (id, name, format, fileName, sourceBytes, canonicalText,
                        contentDigest, importedMicroseconds) VALUES (?, ?, 'fit', 'old.fit', x'00', ?, ?, 0)
                        """, arguments: [id, id, text, id])
            }
        }
        try queue.close()
        let listed = try cyclelog(["workouts", "list", "--json", "--db", database])
        XCTAssertEqual(listed.status, 0, listed.errorOutput)
        XCTAssertEqual(listed.lines.count, 9, "the built-in workouts and over-unders")
        XCTAssertTrue(listed.output.contains("\"over-unders\""), listed.output)
        XCTAssertTrue(
            listed.errorOutput.contains(
                "the library's workout too-many cannot be read: line 10003: more than 10000 steps"),
            listed.errorOutput)
        XCTAssertTrue(
            listed.errorOutput.contains("the library's workout too-large cannot be read: its text is 5.0 MB"),
            listed.errorOutput)
        XCTAssertTrue(listed.errorOutput.contains("cyclelog workouts remove too-many"), listed.errorOutput)
    }

    func testAFITWorkoutGivenToImportNamesWorkoutsImport() throws {
        let database = try temporaryDatabase()
        let file = (database as NSString).deletingLastPathComponent + "/plan.fit"
        _ = FileManager.default.createFile(
            atPath: file,
            contents: Data(
                FITWorkoutFile.write(StructuredWorkout(name: "Plan", steps: steps(3)), createdMicroseconds: 0)))
        let imported = try cyclelog(["import", file, "--db", database])
        XCTAssertEqual(imported.status, 1)
        XCTAssertTrue(
            imported.errorOutput.contains(
                "is a FIT workout (a plan of steps, type 5), not a ride: `cyclelog workouts import`"),
            imported.errorOutput)
    }

    func testRecordChecksItsWorkoutBeforeBluetoothAndCreatesNothing() throws {
        let database = try temporaryDatabase()
        let run = try cyclelog([
            "record", "--workout", "nope", "--db", database, "--bus", "unix:path=/nonexistent/bus", "--plain",
        ])
        XCTAssertEqual(run.status, 1, run.errorOutput)
        XCTAssertEqual(
            run.errorOutput,
            "cyclelog: there is no workout 'nope' in the library; `cyclelog workouts list` shows them\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: database), "a database was left behind")
    }

    func testAFolderWithoutWorkoutFilesIsSaid() throws {
        let database = try temporaryDatabase()
        let folder = (database as NSString).deletingLastPathComponent + "/empty"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "notes".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        let imported = try cyclelog(["workouts", "import", folder, "--db", database])
        XCTAssertEqual(imported.status, 1)
        XCTAssertTrue(
            imported.errorOutput.contains("no workout files in this folder (.zwo, .erg, .mrc or .fit)"),
            imported.errorOutput)
    }
}
