import DBus
import Foundation
import LiveRecording
import RecorderInterface
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// `cyclelog presets`: the built-in suggested workouts, the rider's own, pinning and editing; and the desktop
/// integration a launcher uses — the generated files pass `desktop-file-validate`, `gapplication` lists their
/// actions, and one of them activates a recorder on a private session bus that records a ramp test.
final class PresetsCommandTests: XCTestCase {
    func testBuiltInPresetsAreEditableNotRemovableAndTheRidersOwnComeAndGo() throws {
        let database = try temporaryDatabase()
        func list() throws -> [[String: Any]] {
            try cyclelog(["presets", "list", "--json", "--db", database]).lines.map {
                try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        }
        XCTAssertEqual(try list().map { $0["id"] as? String }, ["open", "20min", "ramp", "endurance-1h"])
        XCTAssertEqual(try list()[3]["style"] as? [String: String], ["goal": "3600s"])

        let add = try cyclelog([
            "presets", "add", "sweet-spot", "--title", "Sweet spot 2×20", "--goal", "1h", "--indoor", "--db", database,
        ])
        XCTAssertEqual(add.status, 0, add.errorOutput)
        XCTAssertEqual(try cyclelog(["presets", "pin", "sweet-spot", "--db", database]).status, 0)
        let listed = try list()
        XCTAssertEqual(listed.first?["id"] as? String, "sweet-spot")
        XCTAssertEqual(listed.first?["title"] as? String, "Sweet spot 2×20")
        XCTAssertEqual(listed.first?["pinned"] as? Bool, true)
        XCTAssertEqual(listed.first?["style"] as? [String: String], ["goal": "3600s", "location": "indoor"])

        let removeBuiltIn = try cyclelog(["presets", "remove", "ramp", "--db", database])
        XCTAssertEqual(removeBuiltIn.status, 1)
        XCTAssertTrue(
            removeBuiltIn.errorOutput.contains("ramp is built in and cannot be removed"), removeBuiltIn.errorOutput)
        let edit = try cyclelog([
            "presets", "add", "ramp", "--title", "Ramp test (armed)", "--test", "ramp", "--when", "pedalling", "--db",
            database,
        ])
        XCTAssertEqual(edit.status, 0, edit.errorOutput)
        let ramp = try XCTUnwrap(try list().first { $0["id"] as? String == "ramp" })
        XCTAssertEqual(ramp["style"] as? [String: String], ["test": "ramp", "when": "pedalling"])
        XCTAssertEqual(ramp["builtIn"] as? Bool, true)
        XCTAssertEqual(try cyclelog(["presets", "reset", "ramp", "--db", database]).status, 0)
        XCTAssertEqual(try list().first { $0["id"] as? String == "ramp" }?["title"] as? String, "Ramp test")

        XCTAssertEqual(try cyclelog(["presets", "remove", "sweet-spot", "--db", database]).status, 0)
        XCTAssertEqual(try list().count, 4)
        let gone = try cyclelog(["presets", "pin", "sweet-spot", "--db", database])
        XCTAssertEqual(gone.status, 1)
        XCTAssertTrue(
            gone.errorOutput.contains("no preset 'sweet-spot'; the presets are open, 20min, ramp"), gone.errorOutput)
        let badID = try cyclelog(["presets", "add", "Hill_Repeats", "--title", "Hills", "--db", database])
        XCTAssertEqual(badID.status, 64)
        XCTAssertTrue(badID.errorOutput.contains("is not a preset id"), badID.errorOutput)
        let badGoal = try cyclelog(["presets", "add", "hills", "--title", "Hills", "--goal", "9x", "--db", database])
        XCTAssertEqual(badGoal.status, 1)
        XCTAssertTrue(badGoal.errorOutput.contains("goal '9x' is not a time"), badGoal.errorOutput)
        let steering = try cyclelog(["presets", "add", "erg", "--title", "ERG", "--control", "erg", "--db", database])
        XCTAssertEqual(steering.status, 1, "a preset does not keep the trainer's mode: refused, not dropped")
        XCTAssertTrue(steering.errorOutput.contains("--control and --power-from go with"), steering.errorOutput)
        XCTAssertEqual(try list().count, 4, "nothing was added")
    }

    /// A preset used to start a ride is offered before the ones never used; a pinned one before both.
    func testRecentlyUsedPresetsComeFirstAfterThePinnedOnes() throws {
        let store = try WorkoutStore(path: try temporaryDatabase())
        try store.presetUsed("ramp", at: 2_000)
        try store.presetUsed("20min", at: 1_000)
        XCTAssertEqual(try store.presets().map(\.preset.id), ["ramp", "20min", "open", "endurance-1h"])
        XCTAssertTrue(try store.pinPreset("endurance-1h", true))
        XCTAssertEqual(try store.presets().map(\.preset.id), ["endurance-1h", "ramp", "20min", "open"])
        XCTAssertFalse(try store.pinPreset("nope", true))
    }

    func testInstalledDesktopActionsActivateARecorderThatRecordsTheRampTest() async throws {
        for tool in ["/usr/bin/desktop-file-validate", "/usr/bin/gapplication"] {
            guard FileManager.default.isExecutableFile(atPath: tool) else {
                XCTFail("\(tool) is missing (scripts/setup.sh installs desktop-file-utils and libglib2.0-bin)")
                return
            }
        }
        let dataHome = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cyclelog-xdg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dataHome) }
        let services = dataHome.appendingPathComponent("dbus-1/services").path
        let bus = try PrivateBus(serviceDirectories: [services])
        let standIn = try StandIn(sensors: [StandIn.power], bus: bus)
        try await standIn.waitUntilReady()
        let database = bus.folder.appendingPathComponent("activated.sqlite").path
        XCTAssertEqual(
            try cyclelog(["sensors", "add", "C0:11:22:33:44:01", "--name", "Stages Power L", "--db", database]).status,
            0)
        let environment = ["XDG_DATA_HOME": dataHome.path, "XDG_DATA_DIRS": dataHome.path]
        let install = try cyclelog(["presets", "install", "--db", database], environment: environment)
        XCTAssertEqual(install.status, 0, install.errorOutput)
        let desktopFile = dataHome.appendingPathComponent("applications/org.cyclelog.Recorder.desktop").path
        let validate = try tool(["/usr/bin/desktop-file-validate", desktopFile], in: bus.folder)
        XCTAssertEqual(validate.status, 0, validate.output)
        XCTAssertTrue(validate.output.isEmpty, "no warnings either: \(validate.output)")

        // A preset added afterwards becomes an action at once; removed, it goes.
        let add = try cyclelog(
            ["presets", "add", "sweet-spot", "--title", "Sweet spot", "--db", database], environment: environment)
        XCTAssertEqual(add.status, 0, add.errorOutput)
        XCTAssertTrue(
            try String(contentsOfFile: desktopFile, encoding: .utf8).contains("[Desktop Action start-sweet-spot]"))
        XCTAssertEqual(
            try cyclelog(["presets", "remove", "sweet-spot", "--db", database], environment: environment).status, 0)
        XCTAssertFalse(try String(contentsOfFile: desktopFile, encoding: .utf8).contains("sweet-spot"))

        // What a launcher sees: the presets as actions, then pause, resume, lap and end.
        let session = environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 }
        let actions = try tool(
            ["/usr/bin/gapplication", "list-actions", "org.cyclelog.Recorder"], in: bus.folder, session)
        XCTAssertEqual(
            actions.output.split(separator: "\n").sorted(),
            ["end", "lap", "pause", "resume", "start-20min", "start-endurance-1h", "start-open", "start-ramp"],
            actions.output)

        // The session bus starts the recorder with what the session told it (as a desktop session's
        // UpdateActivationEnvironment does): the stand-in for BlueZ, this bus for control, the test's database.
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "UpdateActivationEnvironment",
            [
                .array(
                    elementSignature: "{ss}",
                    [
                        ("CYCLELOG_DBUS_ADDRESS", bus.address), ("CYCLELOG_CONTROL_BUS", bus.address),
                        ("CYCLELOG_DB", database),
                    ].map { .dictEntry(.string($0.0), .string($0.1)) })
            ])
        let action = try tool(
            ["/usr/bin/gapplication", "action", "org.cyclelog.Recorder", "start-ramp"], in: bus.folder, session)
        XCTAssertEqual(action.status, 0, action.output)
        let activated = try await standIn.busNameOwner(RecorderControl.busName)
        XCTAssertNotNil(activated, "activated")
        let status = try cyclelog(["status", "--json"], environment: ["CYCLELOG_CONTROL_BUS": bus.address])
        XCTAssertTrue(status.output.contains("\"State\": \"running\""), status.output + status.errorOutput)
        // Some riding: a dozen notifications more.
        let sentBefore = try standIn.sent().count
        let deadline = Date().addingTimeInterval(20)
        while try standIn.sent().count < sentBefore + 12, Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let end = try cyclelog(["end", "--now"], environment: ["CYCLELOG_CONTROL_BUS": bus.address])
        XCTAssertEqual(end.status, 0, end.errorOutput)
        // Waiting again after the ride; stopped as a session's end would stop it.
        let owner = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID", [.string(RecorderControl.busName)])
        let pid = try XCTUnwrap(owner.first?.integer)
        for _ in 0..<50 {
            let state = try cyclelog(["status", "--json"], environment: ["CYCLELOG_CONTROL_BUS": bus.address]).output
            if state.contains("\"State\": \"waiting\"") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        try await stop(pid, standIn)

        // `cyclelog start` with no recorder running: the bus starts one, which connects the meter and starts.
        let start = try cyclelog(["start", "20min"], environment: ["CYCLELOG_CONTROL_BUS": bus.address])
        XCTAssertEqual(start.status, 0, start.errorOutput)
        XCTAssertEqual(start.output, "Recording workout 2.\n")
        XCTAssertEqual(try cyclelog(["end", "--now"], environment: ["CYCLELOG_CONTROL_BUS": bus.address]).status, 0)
        let second = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID", [.string(RecorderControl.busName)])
        try await stop(try XCTUnwrap(second.first?.integer), standIn)
        XCTAssertEqual(try WorkoutStore(path: database).summary(2)?.plan.fitnessTest, .twentyMinute)

        let ride = try XCTUnwrap(try WorkoutStore(path: database).summary(1))
        XCTAssertEqual(ride.plan.preset, "ramp")
        XCTAssertEqual(ride.plan.fitnessTest, .ramp)
        XCTAssertEqual(ride.state, .ended)
        XCTAssertEqual(
            try WorkoutStore(path: database).presets().prefix(2).map(\.preset.id), ["20min", "ramp"],
            "the most recently used first")
    }

    /// Stops an activated recorder (as the end of a session would) and waits until it left the bus.
    private func stop(_ pid: Int64, _ standIn: StandIn) async throws {
        kill(pid_t(pid), SIGTERM)
        for _ in 0..<100 where try await standIn.busNameOwner(RecorderControl.busName) != nil {
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Runs a tool to the end; its standard output and error together.
    private func tool(_ arguments: [String], in folder: URL, _ environment: [String: String] = [:]) throws
        -> (status: Int32?, output: String)
    {
        let log = folder.appendingPathComponent("tool-\(UUID().uuidString).log").path
        let process = try ChildProcess(
            arguments, environment: environment, outputPath: log)
        let status = process.wait(seconds: 60)
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }
}
