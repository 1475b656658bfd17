import Foundation
import TestSupport
import XCTest

/// `cyclelog import` of the four real rides' FIT files (Fixtures/rides/fit): the devices' own totals kept, the
/// oracle's values reproduced, one ride per file however often it is imported, damaged files refused whole, and
/// export → import → export giving the same file.
final class ImportCommandTests: XCTestCase {
    let fitFolder = fixturesFolder.appendingPathComponent("rides/fit")

    func json(_ arguments: [String]) throws -> Any {
        let run = try cyclelog(arguments)
        XCTAssertEqual(run.status, 0, run.errorOutput)
        return try JSONSerialization.jsonObject(with: Data(run.output.utf8))
    }

    func list(_ database: String) throws -> [[String: Any]] {
        try XCTUnwrap(try json(["list", "--json", "--db", database]) as? [[String: Any]])
    }

    /// The stored workout imported from a ride's file.
    func shown(_ ride: String, _ database: String) throws -> [String: Any] {
        let entry = try XCTUnwrap(try list(database).first { ($0["source"] as? String ?? "").hasSuffix("\(ride).fit") })
        return try XCTUnwrap(try json(["show", "\(entry["id"] ?? "")", "--json", "--db", database]) as? [String: Any])
    }

    func testRealRidesImportOnceWithTheDevicesTotalsAndTheOraclesValues() throws {
        let database = try temporaryDatabase()
        let run = try cyclelog(["import", "--db", database, fitFolder.path])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertEqual(run.lines.filter { $0.contains(": imported as workout") }.count, 4, run.output)

        let references = try XCTUnwrap(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: fixturesFolder.appendingPathComponent("rides/references.json")))
                as? [String: [String: Any]])
        for ride in RideRecords.realRides {
            let summary = try shown(ride, database)
            let device = try XCTUnwrap(
                (try RideRecords.device(ride)["fit_session_summary_from_device"] as? [[String: Any]])?.first)
            for (ours, theirs) in [
                ("elapsedSeconds", "total_elapsed_time"), ("movingSeconds", "total_timer_time"),
                ("distanceMeters", "total_distance"), ("workJoules", "total_work"),
            ] {
                XCTAssertEqual(
                    try RideRecords.number(summary, ours), try RideRecords.number(device, theirs), accuracy: 0.005,
                    "\(ride) \(ours)")
            }
            XCTAssertEqual(
                (summary["events"] as? [[String: Any]])?.filter { $0["type"] as? String == "pause" }.count,
                ride == "sweatpy_6449921903_ACTIVITY" ? 2 : ride == "sweatpy_2020-06-01-16-52-40" ? 1 : 0, ride)
            XCTAssertEqual(
                (summary["laps"] as? [Any])?.count,
                [
                    "sweatpy_4078723797": 1, "fitparse_Edge810-Vector-2013-08-16-15-35-10": 8,
                    "sweatpy_6449921903_ACTIVITY": 2, "sweatpy_2020-06-01-16-52-40": 5,
                ][ride], ride)
        }
        // The continuous rides: NP and the power curve of the 1 Hz records are the oracle's.
        for ride in RideRecords.continuousRides {
            let summary = try shown(ride, database)
            let reference = try XCTUnwrap(references[ride])
            XCTAssertEqual(
                try RideRecords.number(summary, "normalizedPowerWatts"),
                try RideRecords.number(reference, "normalizedPowerWatts"), accuracy: 0.05, ride)
            for duration in ["1", "5", "60", "300", "1200", "3600"] {
                XCTAssertEqual(
                    try RideRecords.number(summary, "powerCurveWatts", duration),
                    try RideRecords.number(reference, "powerCurveWatts", duration), accuracy: 0.05,
                    "\(ride) \(duration) s")
            }
        }

        // Again, file by file and as a copy elsewhere: the same four rides, nothing added.
        let before = try list(database).map { "\($0["id"] ?? "") \($0["syncIdentifier"] ?? "")" }
        let copy = URL(fileURLWithPath: database).deletingLastPathComponent().appendingPathComponent("copy.fit")
        try FileManager.default.copyItem(at: RideRecords.fitFile("sweatpy_4078723797"), to: copy)
        for file in RideRecords.realRides.map({ RideRecords.fitFile($0).path }) + [copy.path] {
            let again = try cyclelog(["import", "--db", database, file])
            XCTAssertEqual(again.status, 0, again.errorOutput)
            XCTAssertTrue(again.output.contains(": already stored as workout"), again.output)
        }
        XCTAssertEqual(try list(database).map { "\($0["id"] ?? "") \($0["syncIdentifier"] ?? "")" }, before)
    }

    func testImportedRidesCountForTheFTP() throws {
        let database = try temporaryDatabase()
        XCTAssertEqual(
            try cyclelog(["import", "--db", database, RideRecords.fitFile("sweatpy_4078723797").path]).status, 0)
        XCTAssertEqual(try cyclelog(["ftp", "test", "last", "20min", "--db", database]).status, 0)
        let ftp = try XCTUnwrap(try json(["ftp", "--json", "--db", database]) as? [String: Any])
        XCTAssertEqual(ftp["method"] as? String, "best20Minutes")
        // 0.95 × the best 20 minutes of the 1 Hz records (oracle: ftp_95pct_20min_watts); printed to 0.1 W.
        let oracle = try RideRecords.number(
            try RideRecords.oracle("sweatpy_4078723797"), "ftp_95pct_20min_watts", "numpy_reference")
        XCTAssertEqual(try RideRecords.number(ftp, "ftpWatts"), oracle, accuracy: 0.05)
    }

    func testDamagedFilesAreRefusedWholeNamingTheByte() throws {
        let database = try temporaryDatabase()
        let folder = URL(fileURLWithPath: database).deletingLastPathComponent()
        let bytes = try Data(contentsOf: RideRecords.fitFile("sweatpy_4078723797"))

        let cut = folder.appendingPathComponent("cut.fit")
        try bytes.prefix(bytes.count * 6 / 10).write(to: cut)
        var run = try cyclelog(["import", "--db", database, cut.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errorOutput.contains("\(cut.path) ends at byte \(bytes.count * 6 / 10)"), run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("cut short"), run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("nothing was imported"), run.errorOutput)

        // One byte of a power value changed (record data, found by the file CRC at its place, two bytes from
        // the end).
        var changedBytes = [UInt8](bytes)
        changedBytes[bytes.count / 2] ^= 0x01
        let changed = folder.appendingPathComponent("changed.fit")
        try Data(changedBytes).write(to: changed)
        run = try cyclelog(["import", "--db", database, changed.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errorOutput.contains(changed.path), run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("(at byte "), run.errorOutput)

        let text = folder.appendingPathComponent("notes.fit")
        try Data("ride notes, not a FIT file".utf8).write(to: text)
        // A good file among bad ones is still imported; the status says something failed.
        run = try cyclelog([
            "import", "--db", database, text.path, RideRecords.fitFile("sweatpy_2020-06-01-16-52-40").path,
        ])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errorOutput.contains("\(text.path) has a header size of"), run.errorOutput)
        XCTAssertTrue(run.output.contains("imported as workout"), run.output)
        let stored = try list(database)
        XCTAssertEqual(stored.count, 1, "only the good file")
        XCTAssertEqual(stored.first?["status"] as? String, "complete")
    }

    func testRebuildReadsTheStoredFileAgain() throws {
        let database = try temporaryDatabase()
        let file = RideRecords.fitFile("sweatpy_6449921903_ACTIVITY").path
        XCTAssertEqual(try cyclelog(["import", "--db", database, file]).status, 0)
        var before = try XCTUnwrap(try json(["show", "1", "--json", "--db", database]) as? [String: Any])
        var after = try XCTUnwrap(try json(["rebuild", "1", "--json", "--db", database]) as? [String: Any])
        XCTAssertEqual(before.removeValue(forKey: "version") as? Int, 1)
        XCTAssertEqual(after.removeValue(forKey: "version") as? Int, 2)
        XCTAssertEqual(NSDictionary(dictionary: before), NSDictionary(dictionary: after))
        let journal = try cyclelog(["show", "1", "--journal", "--db", database])
        XCTAssertEqual(journal.status, 1)
        XCTAssertTrue(journal.errorOutput.contains("was imported from \(file): it has no journal"), journal.errorOutput)
    }

    /// A real ride with pauses and laps: imported, exported, that file imported into another database and
    /// exported again. Garmin's SDK reads the same messages from both files (the file_id's serial number, made
    /// from each database's ride identity, aside).
    func testExportImportExportGivesTheSameFile() throws {
        let first = try temporaryDatabase(), second = try temporaryDatabase()
        let folder = URL(fileURLWithPath: first).deletingLastPathComponent()
        let one = folder.appendingPathComponent("one.fit").path, two = folder.appendingPathComponent("two.fit").path
        XCTAssertEqual(
            try cyclelog(["import", "--db", first, RideRecords.fitFile("sweatpy_6449921903_ACTIVITY").path]).status, 0)
        XCTAssertEqual(try cyclelog(["export", "last", "--db", first, "-o", one]).status, 0)
        XCTAssertEqual(try cyclelog(["import", "--db", second, one]).status, 0)
        XCTAssertEqual(try cyclelog(["export", "last", "--db", second, "-o", two]).status, 0)

        let fitOne = try readExport("fit", one), fitTwo = try readExport("fit", two)
        XCTAssertEqual(fitOne["sdkErrors"] as? [String], [])
        XCTAssertEqual((fitOne["records"] as? [Any])?.count, 196, "one record per second on the timer")
        XCTAssertEqual((fitOne["laps"] as? [Any])?.count, 2)
        for key in ["records", "events", "laps", "sessions", "activities", "devices"] {
            XCTAssertEqual(
                NSArray(array: fitOne[key] as? [Any] ?? []), NSArray(array: fitTwo[key] as? [Any] ?? []), key)
        }
        func fileIDWithoutSerial(_ fit: [String: Any]) -> NSDictionary {
            var fileID = (fit["fileIds"] as? [[String: Any]])?.first ?? [:]
            fileID["serial_number"] = nil
            return NSDictionary(dictionary: fileID)
        }
        XCTAssertEqual(fileIDWithoutSerial(fitOne), fileIDWithoutSerial(fitTwo))
    }
}

/// Importing a folder: a bar on a terminal, and a tally at the end (imported, already stored, refused by reason).
final class ImportTallyTests: XCTestCase {
    func folderOfFiles() throws -> String {
        let folder = (try temporaryDatabase() as NSString).deletingLastPathComponent + "/files"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let rides = fixturesFolder.appendingPathComponent("rides/fit")
        for name in ["sweatpy_2020-06-01-16-52-40.fit", "sweatpy_6449921903_ACTIVITY.fit"] {
            try FileManager.default.copyItem(
                atPath: rides.appendingPathComponent(name).path, toPath: folder + "/" + name)
        }
        // A file cut short, and one that is no FIT file at all.
        let whole = try Data(
            contentsOf: rides.appendingPathComponent("fitparse_Edge810-Vector-2013-08-16-15-35-10.fit"))
        try whole.prefix(3000).write(to: URL(fileURLWithPath: folder + "/cut.fit"))
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.fit"))
        return folder
    }

    func testAFolderEndsWithATally() throws {
        let folder = try folderOfFiles()
        let db = try temporaryDatabase()
        let first = try cyclelog(["import", "--db", db, folder])
        XCTAssertEqual(first.status, 1, "two files were refused")
        XCTAssertEqual(
            first.lines.last, "4 files: 2 rides imported, 0 already stored, 2 refused (2 damaged or not a ride)")
        let again = try cyclelog(["import", "--db", db, folder])
        XCTAssertEqual(
            again.lines.last, "4 files: 0 rides imported, 2 already stored, 2 refused (2 damaged or not a ride)")
        // A ride the rider deleted is refused for that reason, with the way to store it again.
        XCTAssertEqual(try cyclelog(["delete", "1", "--db", db]).status, 0)
        let deleted = try cyclelog(["import", "--db", db, folder])
        XCTAssertEqual(
            deleted.lines.last,
            "4 files: 0 rides imported, 1 already stored, 3 refused (2 damaged or not a ride,"
                + " 1 deleted before (--undelete stores them again))")
        // JSON stays one summary object per line on standard output; the tally goes to standard error.
        let json = try cyclelog(["import", "--json", "--db", db, folder])
        XCTAssertEqual(json.lines.count, 1, json.output)
        XCTAssertTrue(json.errorOutput.contains("4 files: 0 rides imported, 1 already stored"), json.errorOutput)
        // One file: its line says it all.
        let one = try cyclelog(["import", "--db", db, folder + "/sweatpy_6449921903_ACTIVITY.fit"])
        XCTAssertEqual(one.lines.count, 1, one.output)
    }

    func testOnATerminalABarShowsHowFarItGot() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("script (util-linux) is needed for a terminal")
        }
        let folder = try folderOfFiles()
        let db = try temporaryDatabase()
        // `script` runs the import on a pseudo-terminal, as a rider's shell would.
        let command = [try cyclelogBinary().path, "import", "--db", db, folder].map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        for percent in [25, 50, 75, 100] {
            XCTAssertTrue(text.contains("importing 4 files ["), text)
            XCTAssertTrue(text.contains("] \(percent)%"), "\(percent) %: \(text)")
        }
        XCTAssertTrue(text.contains("4 files: 2 rides imported"), text)
        // Without a terminal there is no bar.
        XCTAssertFalse(try cyclelog(["import", "--db", try temporaryDatabase(), folder]).errorOutput.contains("%"))
    }
}
