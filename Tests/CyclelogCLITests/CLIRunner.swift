import Foundation
import TestSupport
import Workouts
import XCTest

/// What one run of the `cyclelog` binary printed and returned.
struct Run {
    let status: Int32
    let output: String
    let errorOutput: String
    var lines: [String] { output.split(separator: "\n").map(String.init) }
}

/// Starts `cyclelog` with `arguments`, as a user or a script would.
/// With `prefix`, the binary is started through that command (e.g. `setpriv` to run as another user).
func startCyclelog(
    _ arguments: [String], environment: [String: String] = [:], prefix: [String] = []
) throws -> (Process, Pipe, Pipe, Pipe) {
    var merged = environment
    // Tests never touch the rider's own database.
    if merged["CYCLELOG_DB"] == nil {
        merged["CYCLELOG_DB"] =
            ProcessInfo.processInfo.environment["CYCLELOG_TEST_DB"] ?? NSTemporaryDirectory()
            + "cyclelog-tests-default.sqlite"
    }
    if let command = prefix.first {
        return try startProgram(
            URL(fileURLWithPath: command), Array(prefix.dropFirst()) + [try cyclelogBinary().path] + arguments,
            environment: merged)
    }
    return try startProgram(try cyclelogBinary(), arguments, environment: merged)
}

/// Starts `program` with `arguments` and this process's environment with `environment` over it, each of its three
/// streams on a pipe.
func startProgram(
    _ program: URL, _ arguments: [String], environment: [String: String] = [:]
) throws -> (Process, Pipe, Pipe, Pipe) {
    let process = Process()
    process.executableURL = program
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let input = Pipe(), output = Pipe(), errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    return (process, input, output, errors)
}

/// Runs `cyclelog` to the end.
func cyclelog(
    _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], prefix: [String] = []
) throws -> Run {
    try finish(try startCyclelog(arguments, environment: environment, prefix: prefix), stdin: stdin)
}

/// Runs any program (`make`, `readelf`, a script, a copy of `cyclelog`) to the end.
func runProgram(_ program: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> Run {
    try finish(try startProgram(program, arguments, environment: environment), stdin: nil)
}

/// Waits for a started program, its standard input written while both output pipes are read, so that neither a
/// large input nor a large output can block the child (or this process) when a pipe fills.
private func finish(_ started: (Process, Pipe, Pipe, Pipe), stdin: String?) -> Run {
    let (process, input, output, errors) = started
    let writer = Thread {
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
    }
    writer.start()
    let errorData = Collected()
    let errorReader = Thread { errorData.data = errors.fileHandleForReading.readDataToEndOfFile() }
    errorReader.start()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errorReader.isFinished || !writer.isFinished { usleep(1000) }
    return Run(
        status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
        errorOutput: String(decoding: errorData.data, as: UTF8.self))
}

/// Standard error, filled by a reader thread and read only after that thread finished.
private final class Collected: @unchecked Sendable {
    var data = Data()
}

/// A fresh database path in a fresh temporary folder.
func temporaryDatabase() throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent("rides.sqlite").path
}

/// What independent decoders read in an exported file (Tests/ExportCheck/read_exports.py): `kind` is fit (Garmin's
/// FIT SDK and fitdecode) or tcx (tcxreader).
func readExport(_ kind: String, _ path: String) throws -> [String: Any] {
    let reader = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ExportCheck/read_exports.py").path
    let output = URL(fileURLWithPath: path + ".json").path
    let process = try ChildProcess(["/usr/bin/env", "python3", reader, kind, path], outputPath: output)
    let status = process.wait(seconds: 120)
    let text = try String(contentsOfFile: output, encoding: .utf8)
    XCTAssertEqual(
        status, 0, "the decoder failed (scripts/setup.sh installs garmin-fit-sdk, fitdecode, tcxreader):\n\(text)")
    return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
}

extension XCTestCase {
    /// What Garmin's FIT SDK and fitdecode read in an exported FIT file (`readExport("fit", …)`) against the
    /// stored ride: records, laps, the session's totals and the timer's events.
    func checkFIT(_ fit: [String: Any], summary: WorkoutSummary, samples: [SecondSample]) throws {
        XCTAssertEqual(fit["isFIT"] as? Bool, true)
        XCTAssertEqual(fit["integrity"] as? Bool, true, "Garmin's SDK checks the header and file CRCs")
        XCTAssertEqual(fit["sdkErrors"] as? [String], [])
        let running = samples.filter(\.isRunning)
        let counts = try XCTUnwrap(fit["fitdecodeCounts"] as? [String: Int])
        XCTAssertEqual(counts["record"], running.count)
        XCTAssertEqual(counts["file_id"], 1)
        XCTAssertEqual(counts["session"], 1)
        XCTAssertEqual(counts["activity"], 1)
        XCTAssertEqual(counts["lap"], summary.laps.count)
        XCTAssertEqual(counts["device_info"], summary.sensors.count + 1)

        let records = try XCTUnwrap(fit["records"] as? [[String: Any]])
        XCTAssertEqual(records.count, running.count)
        for (record, sample) in zip(records, running) {
            let unix = Int64(try XCTUnwrap(record["timestamp"] as? Int)) + ExportCommandTests.fitEpochSeconds
            XCTAssertEqual(unix, summary.startMicroseconds / 1_000_000 + Int64(sample.second))
            XCTAssertEqual((record["power"] as? Int).map(Double.init), sample.powerWatts.map { $0.rounded() })
            XCTAssertEqual((record["heart_rate"] as? Int).map(Double.init), sample.heartRateBPM.map { $0.rounded() })
        }

        let session = try XCTUnwrap((fit["sessions"] as? [[String: Any]])?.first)
        let statistics = summary.statistics
        XCTAssertEqual(
            try XCTUnwrap(session["total_elapsed_time"] as? Double), statistics.elapsedSeconds, accuracy: 5e-4)
        XCTAssertEqual(try XCTUnwrap(session["total_timer_time"] as? Double), statistics.movingSeconds, accuracy: 5e-4)
        XCTAssertEqual(try XCTUnwrap(session["total_distance"] as? Double), statistics.distanceMeters, accuracy: 5e-3)
        XCTAssertEqual(session["total_work"] as? Int, statistics.workJoules.map { Int($0.rounded()) })
        XCTAssertEqual(session["avg_power"] as? Int, statistics.averagePowerWatts.map { Int($0.rounded()) })
        XCTAssertEqual(session["max_power"] as? Int, statistics.maximumPowerWatts.map { Int($0.rounded()) })
        XCTAssertEqual(session["normalized_power"] as? Int, statistics.normalizedPowerWatts.map { Int($0.rounded()) })
        XCTAssertEqual(session["avg_heart_rate"] as? Int, statistics.averageHeartRateBPM.map { Int($0.rounded()) })
        XCTAssertEqual(session["sport"] as? String, "cycling")
        XCTAssertEqual(session["num_laps"] as? Int, summary.laps.count)

        // Pauses: the timer stops at each pause and at the end, and starts at the start and each resume.
        let timer = try XCTUnwrap(fit["events"] as? [[String: Any]]).filter { $0["event"] as? String == "timer" }
        let pauses = summary.events.filter { $0.control == .pause }.count
        XCTAssertEqual(timer.filter { $0["event_type"] as? String == "stop_all" }.count, pauses + 1)
        XCTAssertEqual(timer.filter { $0["event_type"] as? String == "start" }.count, pauses + 1)
        let activity = try XCTUnwrap((fit["activities"] as? [[String: Any]])?.first)
        XCTAssertEqual(try XCTUnwrap(activity["total_timer_time"] as? Double), statistics.movingSeconds, accuracy: 5e-4)
    }
}
