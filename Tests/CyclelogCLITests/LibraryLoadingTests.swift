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
        let unlinking = try runProgram(repository.appendingPathComponent("scripts/unlink-dbus.sh"), [unlinked])
        XCTAssertEqual(unlinking.status, 0, unlinking.errorOutput)
        let needed = try runProgram(URL(fileURLWithPath: "/usr/bin/readelf"), ["--dynamic", unlinked])
        XCTAssertFalse(needed.output.contains("libdbus"), needed.output)

        // A database with no rides, made by a writing command.
        let database = folder.appendingPathComponent("rides.sqlite").path
        let made = try runProgram(URL(fileURLWithPath: unlinked), ["recover", "--db", database])
        XCTAssertEqual(made.status, 0, made.errorOutput)
        let list = try runProgram(
            URL(fileURLWithPath: unlinked), ["list", "--db", database], environment: ["LD_DEBUG": "files"])
        // The dynamic loader reports on standard error.
        let loaded = list.errorOutput
        XCTAssertEqual(list.status, 0, loaded)
        XCTAssertTrue(loaded.contains("file=libsqlite3.so.0"), "the loader's report is read: \(loaded)")
        XCTAssertFalse(loaded.contains("file=libdbus-1.so.3"), loaded)
        XCTAssertFalse(loaded.contains("file=libsystemd.so.0"), loaded)

        // Asking the recorder on a bus where none runs: libdbus is loaded then, and the answer is the usual one.
        let bus = try PrivateBus()
        let status = try runProgram(
            URL(fileURLWithPath: unlinked), ["status"],
            environment: ["LD_DEBUG": "files", "CYCLELOG_CONTROL_BUS": bus.address])
        XCTAssertTrue(status.errorOutput.contains("file=libdbus-1.so.3"), status.errorOutput)
        XCTAssertTrue(status.errorOutput.contains("no ride is being recorded"), status.errorOutput)
    }
}
