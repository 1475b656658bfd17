import Formats
import Foundation
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// `cyclelog export`: every FIT file is read back by Garmin's FIT SDK for Python and by fitdecode (which checks
/// both CRCs), TCX by tcxreader, CSV by the test; the values must be the stored workout's.
final class ExportCommandTests: XCTestCase {
    /// Seconds from the Unix epoch to FIT's, 1989-12-31T00:00:00Z (FIT protocol, date_time).
    static let fitEpochSeconds: Int64 = 631_065_600

    func testFITOfRealRidesReadsBackWithGarminsSDKAndFitdecode() throws {
        let database = try temporaryDatabase()
        for ride in ["sweatpy_6449921903_ACTIVITY", "fitparse_Edge810-Vector-2013-08-16-15-35-10"] {
            let replay = try cyclelog([
                "replay", "--db", database, fixturesFolder.appendingPathComponent("rides/\(ride).journal").path,
            ])
            XCTAssertEqual(replay.status, 0, replay.errorOutput)
        }
        let store = try WorkoutStore(path: database)
        for id: Int64 in [1, 2] {
            let path = URL(fileURLWithPath: database).deletingLastPathComponent().appendingPathComponent("\(id).fit")
                .path
            let export = try cyclelog(["export", "\(id)", "--db", database, "-o", path])
            XCTAssertEqual(export.status, 0, export.errorOutput)
            let fit = try readExport("fit", path)
            let summary = try XCTUnwrap(try store.summary(id))
            let samples = try store.samples(id)
            try checkFIT(fit, summary: summary, samples: samples)
        }
    }

    func testPedalBalanceBecomesTheRightPedalsShareWithItsBit() throws {
        // A power meter reporting the left pedal's share (CPS flags bit 1) for 3 s, then a share of an unknown
        // pedal: 104/2 = 52 % left is 48 % right (0x80 | 48 = 176); 110/2 = 55 % unknown stays 55 without the bit.
        var lines = [
            "# cyclelog journal 1", "2024-05-01T08:00:00.000000Z connect C0:11:22:33:44:55 Pedals",
            "2024-05-01T08:00:00.000000Z start indoor name=Balance",
        ]
        for tenth in stride(from: 2, to: 60, by: 5) {
            let flags = tenth < 30 ? "0300" : "0100"
            let balance = tenth < 30 ? "68" : "6e"
            lines.append(
                "2024-05-01T08:00:0\(tenth / 10).\(tenth % 10)00000Z notify C0:11:22:33:44:55 2a63 \(flags)c800\(balance)"
            )
        }
        lines.append("2024-05-01T08:00:06.000000Z end")
        let folder = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
        let journal = folder.appendingPathComponent("balance.journal")
        try (lines.joined(separator: "\n") + "\n").write(to: journal, atomically: true, encoding: .utf8)
        let database = folder.appendingPathComponent("rides.sqlite").path
        XCTAssertEqual(try cyclelog(["replay", "--db", database, journal.path]).status, 0)
        let path = folder.appendingPathComponent("balance.fit").path
        XCTAssertEqual(try cyclelog(["export", "last", "--db", database, "-o", path]).status, 0)
        let fit = try readExport("fit", path)
        XCTAssertEqual(fit["sdkErrors"] as? [String], [])
        let balance = try XCTUnwrap(fit["fitdecodeBalance"] as? [Int?])
        XCTAssertEqual(balance, [176, 176, 176, 55, 55, 55])
    }

    func testTCXReadsBackWithTcxreaderAndCSVHasARowPerSecond() throws {
        let database = try temporaryDatabase()
        let ride = fixturesFolder.appendingPathComponent("rides/sweatpy_6449921903_ACTIVITY.journal").path
        XCTAssertEqual(try cyclelog(["replay", "--db", database, ride]).status, 0)
        let folder = URL(fileURLWithPath: database).deletingLastPathComponent().appendingPathComponent("out").path
        for format in ["tcx", "csv"] {
            let export = try cyclelog(["export", "1", "--format", format, "--db", database, "-o", folder])
            XCTAssertEqual(export.status, 0, export.errorOutput)
        }
        let store = try WorkoutStore(path: database)
        let summary = try XCTUnwrap(try store.summary(1))
        let samples = try store.samples(1)
        let running = samples.filter(\.isRunning)
        let date = "2021-03-18"

        let tcx = try readExport("tcx", "\(folder)/cyclelog-1-\(date).tcx")
        XCTAssertEqual(tcx["sport"] as? String, "Biking")
        let points = try XCTUnwrap(tcx["trackpoints"] as? [[String: Any]])
        XCTAssertEqual(points.count, running.count, "a trackpoint per second on the timer")
        for (point, sample) in zip(points, running) {
            let time = summary.startMicroseconds + Int64(sample.second) * 1_000_000
            XCTAssertEqual(point["time"] as? String, UTCTime.formatSeconds(microseconds: time))
            XCTAssertEqual(point["watts"] as? Double, sample.powerWatts.map { $0.rounded() })
            XCTAssertEqual((point["heartRate"] as? Double).map(Int.init), sample.heartRateBPM.map { Int($0.rounded()) })
        }
        let laps = try XCTUnwrap(tcx["laps"] as? [[String: Any]])
        XCTAssertEqual(laps.count, summary.laps.count)
        XCTAssertEqual(
            laps.first?["calories"] as? Int, Int(((summary.laps.first?.statistics.workJoules ?? 0) / 1000).rounded()))

        let csv = try String(contentsOfFile: "\(folder)/cyclelog-1-\(date).csv", encoding: .utf8)
        let rows = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        XCTAssertEqual(
            rows.first?.joined(separator: ","),
            "time_utc,elapsed_s,timer_running,power_w,cadence_rpm,speed_m_per_s,heart_rate_bpm,distance_m")
        XCTAssertEqual(rows.count - 1, samples.count, "a row per second, paused ones included")
        for (row, sample) in zip(rows.dropFirst(), samples) {
            XCTAssertEqual(Int(row[1]), sample.second)
            XCTAssertEqual(row[2], sample.isRunning ? "1" : "0")
            XCTAssertEqual(Double(row[3]), sample.powerWatts.map { $0.rounded() })
        }
        XCTAssertEqual(rows.dropFirst().filter { $0[2] == "0" }.count, samples.count - running.count)
    }

    func testSinceExportsEveryRideFromThatDateIntoAFolder() throws {
        let database = try temporaryDatabase()
        for ride in ["sweatpy_6449921903_ACTIVITY", "fitparse_Edge810-Vector-2013-08-16-15-35-10"] {
            let path = fixturesFolder.appendingPathComponent("rides/\(ride).journal").path
            XCTAssertEqual(try cyclelog(["replay", "--db", database, path]).status, 0)
        }
        let folder = URL(fileURLWithPath: database).deletingLastPathComponent().appendingPathComponent("since").path
        let export = try cyclelog(["export", "--since", "2020-01-01", "--db", database, "-o", folder])
        XCTAssertEqual(export.status, 0, export.errorOutput)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), ["cyclelog-1-2021-03-18.fit"])
        let none = try cyclelog(["export", "--db", database])
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.errorOutput.contains("--since"), none.errorOutput)
    }
}
