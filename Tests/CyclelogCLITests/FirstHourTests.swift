import Foundation
import TestSupport
import XCTest

/// A new rider's first hour with a plain clone: the Makefile's targets end in words, never in a traceback.
final class FirstHourTests: XCTestCase {
    /// A file that is not there is one mistake, said one way with one status wherever it is named: a local file
    /// the program was given and cannot use (2).
    func testAMissingFileIsSaidOneWayWithOneStatus() throws {
        let database = try temporaryDatabase()
        let missing = (database as NSString).deletingLastPathComponent + "/nope"
        for (arguments, file) in [
            (["replay"], missing + ".journal"), (["import"], missing + ".fit"),
            (["workouts", "import"], missing + ".zwo"),
        ] {
            let run = try cyclelog(arguments + [file, "--db", database])
            XCTAssertEqual(run.status, 2, "\(arguments)")
            XCTAssertEqual(run.errorOutput, "cyclelog: \(file): no such file or folder\n", "\(arguments)")
        }
    }

    /// `show` for a rider: pauses listed with when and how long, sensors and gaps by name, no identity or version
    /// number of an unchanged ride (both in `show --json`).
    func testShowListsPausesAndKeepsIdentitiesForTheJSON() throws {
        let database = try temporaryDatabase()
        var lines = [
            "# cyclelog journal 1", "2024-05-01T08:00:00.000000Z start name=Pauses",
            "2024-05-01T08:00:00.100000Z connect C0:11:22:33:44:55 Stages Power L",
        ]
        for second in 0..<40 {
            lines.append(String(format: "2024-05-01T08:00:%02d.500000Z notify C0:11:22:33:44:55 2a63 0000c800", second))
        }
        lines += [
            "2024-05-01T08:00:10.000000Z pause", "2024-05-01T08:00:15.000000Z resume",
            "2024-05-01T08:00:40.000000Z end",
        ]
        let journal = (database as NSString).deletingLastPathComponent + "/pauses.journal"
        try (lines.sorted { $0.prefix(27) < $1.prefix(27) }.joined(separator: "\n") + "\n").write(
            toFile: journal, atomically: true, encoding: .utf8)
        XCTAssertEqual(try cyclelog(["replay", journal, "--db", database]).status, 0)
        let shown = try cyclelog(["show", "last", "--db", database])
        XCTAssertTrue(shown.output.hasPrefix("Workout 1 \"Pauses\" — ended\n"), shown.output)
        XCTAssertTrue(shown.output.contains("  paused       0:10  for 0:05"), shown.output)
        XCTAssertTrue(shown.output.contains("  sensor       Stages Power L (C0:11:22:33:44:55)"), shown.output)
        let json = try cyclelog(["show", "last", "--json", "--db", database])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let identity = try XCTUnwrap(object["syncIdentifier"] as? String)
        XCTAssertFalse(shown.output.contains(identity) || shown.output.contains("version"), shown.output)
    }

    /// One project, one version, whichever program says it; a slip in a command's name is answered with the
    /// nearest one; a file in a format cyclelog does not write is refused, not made a folder.
    func testVersionsSlipsAndAnOutputOfAnotherFormat() throws {
        let versions = try ["cyclelog", "cyclelog-mirror", "cyclelog-sync"].map {
            try runProgram(try builtBinary($0), ["--version"]).output
        }
        XCTAssertEqual(Set(versions).count, 1, "\(versions)")
        // `record --help` names every dashboard key, the trainer's and the workout's too.
        let help = try cyclelog(["record", "--help"]).output.replacingOccurrences(of: "\n", with: " ")
        for key in ["space pause/resume", "+ / - 10 W", "f free", "n next step", "b back", "x one more minute"] {
            XCTAssertTrue(help.contains(key), "\(key): \(help)")
        }
        let slip = try cyclelog(["lsit"])
        XCTAssertEqual(slip.status, 64)
        XCTAssertEqual(
            slip.errorOutput,
            "cyclelog: 'lsit' is not a command; did you mean `cyclelog list`? (`cyclelog --help` lists them)\n")
        let database = try temporaryDatabase()
        let gpx = (database as NSString).deletingLastPathComponent + "/out.gpx"
        let export = try cyclelog(["export", "last", "-o", gpx, "--db", database])
        XCTAssertEqual(export.status, 64, export.errorOutput)
        XCTAssertTrue(
            export.errorOutput.contains("cyclelog writes .fit, .tcx and .csv files, not .gpx"), export.errorOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: gpx), "a folder was made")
    }

    /// `make fixtures` without the project's shared data beside the clone says what it needs and that nothing is
    /// missing, instead of a Python traceback (the Makefile is run from a folder with no ../shared).
    func testMakeFixturesWithoutTheSharedDataSaysSo() throws {
        let root = fixturesFolder.deletingLastPathComponent()
        let alone = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
            .appendingPathComponent("clone")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: root.appendingPathComponent("Makefile"), to: alone.appendingPathComponent("Makefile"))
        let make = try runProgram(
            URL(fileURLWithPath: "/usr/bin/make"), ["--no-print-directory", "-C", alone.path, "fixtures"])
        let said = make.errorOutput
        XCTAssertEqual(make.status, 2, said)
        XCTAssertTrue(said.contains("fixtures: no ../shared/data/captures and rides beside this clone"), said)
        XCTAssertFalse(said.contains("Traceback"), said)
    }
}
