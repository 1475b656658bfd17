import Foundation
import TestSupport
import XCTest

/// libdbus is loaded at the first D-Bus call (Sources/CDBusLoader), so that the commands that never reach D-Bus do
/// not pay for it and for the libraries it brings (libsystemd and six behind it). The release programs are linked
/// without it by `scripts/unlink-dbus.sh`; this test makes such a `cyclelog` from the one the tests run and watches
/// the dynamic loader (`LD_DEBUG=files`) while it lists rides and while it asks the recorder.
final class LibraryLoadingTests: XCTestCase {
    func testLibdbusIsLoadedAtTheFirstDBusCallAndNotBefore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let unlinked = folder.appendingPathComponent("cyclelog").path
        try FileManager.default.copyItem(atPath: try cyclelogBinary().path, toPath: unlinked)
        let repository = fixturesFolder.deletingLastPathComponent()
        let unlinking = try run(repository.appendingPathComponent("scripts/unlink-dbus.sh").path, [unlinked])
        XCTAssertEqual(unlinking.status, 0, unlinking.output)
        let needed = try run("/usr/bin/readelf", ["--dynamic", unlinked])
        XCTAssertFalse(needed.output.contains("libdbus"), needed.output)

        // A database with no rides, made by a writing command.
        let database = folder.appendingPathComponent("rides.sqlite").path
        let made = try run(unlinked, ["recover", "--db", database])
        XCTAssertEqual(made.status, 0, made.output)
        let list = try run(unlinked, ["list", "--db", database], environment: ["LD_DEBUG": "files"])
        XCTAssertEqual(list.status, 0, list.output)
        XCTAssertTrue(list.output.contains("file=libsqlite3.so.0"), "the loader's report is read: \(list.output)")
        XCTAssertFalse(list.output.contains("file=libdbus-1.so.3"), list.output)
        XCTAssertFalse(list.output.contains("file=libsystemd.so.0"), list.output)

        // Asking the recorder on a bus where none runs: libdbus is loaded then, and the answer is the usual one.
        let bus = try PrivateBus()
        let status = try run(
            unlinked, ["status"], environment: ["LD_DEBUG": "files", "CYCLELOG_CONTROL_BUS": bus.address])
        XCTAssertTrue(status.output.contains("file=libdbus-1.so.3"), status.output)
        XCTAssertTrue(status.output.contains("no ride is being recorded"), status.output)
    }

    /// Runs `program` to its end, standard output and error together.
    private func run(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, output: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
