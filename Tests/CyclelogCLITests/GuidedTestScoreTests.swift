import Formats
import Foundation
import StructuredWorkouts
import XCTest

/// A guided FTP test is scored only when the ride reached its scored part (Docs/guide/workouts.md, "Guided FTP
/// tests"): a ramp stopped in its second minute leaves the FTP in force as it was; one ridden into its hard part
/// sets 75 % of its best minute. `show` says the test and its score, `ftp` names the ride.
final class GuidedTestScoreTests: XCTestCase {
    /// A ramp test's journal: the built-in ramp (100 W, 20 W a minute) followed for `seconds`, the meter at `watts`
    /// every second (a Cycling Power Measurement with flags 0).
    func rampJournal(seconds: Int, watts: Int, day: String) -> String {
        let workout = ShownText.lineEscaped(WorkoutText.text(BuiltInWorkouts.ramp(startWatts: 100, stepWatts: 20)))
        var lines = [
            "# cyclelog journal 1",
            "\(day)T08:00:00.000000Z start test=ramp name=Ramp",
            "\(day)T08:00:00.000000Z workout ftp=none \(workout)",
            "\(day)T08:00:00.100000Z connect C0:11:22:33:44:55 Meter",
        ]
        let power = String(format: "0000%02x%02x", watts & 0xFF, watts >> 8)
        for second in 0...seconds {
            let time = String(format: "%02d:%02d:%02d", 8 + second / 3600, second / 60 % 60, second % 60)
            lines.append("\(day)T\(time).500000Z notify C0:11:22:33:44:55 2a63 \(power)")
        }
        lines.append(
            "\(day)T\(String(format: "%02d:%02d:%02d", 8 + (seconds + 1) / 3600, (seconds + 1) / 60 % 60, (seconds + 1) % 60)).600000Z end"
        )
        return lines.joined(separator: "\n") + "\n"
    }

    /// The ramp ridden on `day` replayed into `database`; the replay.
    @discardableResult
    func replayRamp(seconds: Int, watts: Int, day: String, into database: String) throws -> Run {
        let file = (database as NSString).deletingLastPathComponent + "/ramp-\(day).journal"
        try rampJournal(seconds: seconds, watts: watts, day: day).write(toFile: file, atomically: true, encoding: .utf8)
        let replay = try cyclelog(["replay", file, "--db", database])
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        return replay
    }

    func json(_ run: Run) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], run.output)
    }

    func testARampCutShortIsNotScoredAndTheFTPInForceStays() throws {
        let database = try temporaryDatabase()
        // The FTP in force: 225 W, from a ramp ridden into its hard part the day before.
        try replayRamp(seconds: 300 + 6 * 60, watts: 300, day: "2026-11-14", into: database)
        // Stopped 20 s into the ramp's second minute, at 106 W.
        let replay = try replayRamp(seconds: 300 + 80, watts: 106, day: "2026-11-15", into: database)
        XCTAssertTrue(
            replay.output.contains(
                "FTP test     the ramp test is not scored: the ramp ended after 1 of its minutes, before it was hard"),
            replay.output)
        let ftp = try json(try cyclelog(["ftp", "--json", "--db", database]))
        XCTAssertEqual(ftp["ftpWatts"] as? Double, 225, "\(ftp)")
        XCTAssertEqual(ftp["workoutId"] as? Int, 1, "\(ftp)")
        let shown = try json(try cyclelog(["show", "last", "--json", "--db", database]))
        let test = try XCTUnwrap(shown["fitnessTest"] as? [String: Any], "\(shown)")
        XCTAssertEqual(test["test"] as? String, "ramp")
        XCTAssertEqual(test["scored"] as? Bool, false)
        XCTAssertTrue(test["ftpWatts"] is NSNull)
        XCTAssertEqual(test["basisWatts"] as? Double, 106)
        XCTAssertTrue((test["unscoredReason"] as? String)?.contains("before it was hard") == true, "\(test)")
    }

    func testARampRiddenIntoItsHardPartSetsTheFTPAndSaysWhichRide() throws {
        let database = try temporaryDatabase()
        // Six minutes of the ramp after its warm-up, at 300 W throughout: 75 % of 300 W.
        try replayRamp(seconds: 300 + 6 * 60, watts: 300, day: "2026-11-16", into: database)
        let shown = try cyclelog(["show", "last", "--db", database])
        XCTAssertTrue(
            shown.output.contains(
                "FTP test     FTP 225 W from this ramp test (75 % of its best minute, 300 W), the FTP in force"),
            shown.output)
        let test = try XCTUnwrap(
            try json(try cyclelog(["show", "last", "--json", "--db", database]))["fitnessTest"] as? [String: Any])
        XCTAssertEqual(test["scored"] as? Bool, true)
        XCTAssertEqual(test["ftpWatts"] as? Double, 225)
        XCTAssertEqual(test["inForce"] as? Bool, true)
        let ftp = try cyclelog(["ftp", "--db", database])
        XCTAssertTrue(ftp.output.contains("75 % of a ramp test's best minute"), ftp.output)
        XCTAssertTrue(ftp.output.contains("workout 1"), ftp.output)
        let lines = ftp.output.split(separator: "\n")
        XCTAssertEqual(lines.count, Set(lines).count, "no line twice: \(ftp.output)")
    }
}
