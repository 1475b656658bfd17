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

    /// `make fixtures` without the project's shared data beside the clone says what it needs and that nothing is
    /// missing, instead of a Python traceback (the Makefile is run from a folder with no ../shared).
    func testMakeFixturesWithoutTheSharedDataSaysSo() throws {
        let root = fixturesFolder.deletingLastPathComponent()
        let alone = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
            .appendingPathComponent("clone")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: root.appendingPathComponent("Makefile"), to: alone.appendingPathComponent("Makefile"))
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/make")
        make.arguments = ["--no-print-directory", "-C", alone.path, "fixtures"]
        let errors = Pipe()
        make.standardError = errors
        make.standardOutput = FileHandle.nullDevice
        try make.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        make.waitUntilExit()
        XCTAssertEqual(make.terminationStatus, 2, said)
        XCTAssertTrue(said.contains("fixtures: no ../shared/data/captures and rides beside this clone"), said)
        XCTAssertFalse(said.contains("Traceback"), said)
    }
}
