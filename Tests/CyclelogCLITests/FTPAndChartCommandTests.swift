import Foundation
import TestSupport
import XCTest

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `cyclelog ftp` and `cyclelog chart` on the real-ride fixtures.
final class FTPAndChartCommandTests: XCTestCase {
    let rides = fixturesFolder.appendingPathComponent("rides")
    let road = "sweatpy_4078723797.journal"
    let vector = "fitparse_Edge810-Vector-2013-08-16-15-35-10.journal"

    func json(_ arguments: [String]) throws -> [String: Any] {
        let run = try cyclelog(arguments)
        XCTAssertEqual(run.status, 0, run.errorOutput)
        return try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], run.output)
    }

    /// A database holding the two long rides (workout 1: the road ride of 2019, workout 2: the 2013 ride).
    func database() throws -> String {
        let db = try temporaryDatabase()
        for file in [road, vector] {
            let run = try cyclelog(["replay", "--db", db, rides.appendingPathComponent(file).path])
            XCTAssertEqual(run.status, 0, run.errorOutput)
        }
        return db
    }

    func testFTPComesFromADeclaredTestOrByHandAndShowsInTheRidesOfItsDates() throws {
        let db = try database()
        // Six years apart, the rides never share a window: no automatic FTP.
        var ftp = try json(["ftp", "--json", "--db", db])
        for key in [
            "ftpWatts", "method", "criticalPowerWatts", "wPrimeJoules", "best20MinuteWatts", "windowDays", "efforts",
            "history",
        ] {
            XCTAssertTrue(ftp.keys.contains(key), key)
        }
        XCTAssertTrue(ftp["ftpWatts"] is NSNull)
        XCTAssertEqual(ftp["windowDays"] as? Int, 42)

        // The road ride declared a 20-minute test: 0.95 × its best 20 minutes (oracle: 291.474 W from the 1 Hz
        // records; the replay's 3–4 Hz notifications land within a few tenths).
        XCTAssertEqual(try cyclelog(["ftp", "test", "1", "20min", "--db", db]).status, 0)
        ftp = try json(["ftp", "--json", "--db", db])
        XCTAssertEqual(ftp["method"] as? String, "best20Minutes")
        XCTAssertEqual(try XCTUnwrap(ftp["ftpWatts"] as? Double), 291.474, accuracy: 0.3)
        let history = try XCTUnwrap(ftp["history"] as? [[String: Any]])
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual((history[0]["efforts"] as? [[String: Any]])?.first?["durationSeconds"] as? Int, 1200)

        // A manual value from 2013 on holds for the 2013 ride; the 2019 test is newer and waits to be accepted.
        XCTAssertEqual(try cyclelog(["ftp", "set", "250", "--from", "2013-01-01", "--db", db]).status, 0)
        let shown = try json(["show", "2", "--json", "--db", db])
        XCTAssertEqual(shown["ftpWatts"] as? Double, 250)
        XCTAssertEqual(shown["ftpMethod"] as? String, "manual")
        let np = try XCTUnwrap(shown["normalizedPowerWatts"] as? Double)
        XCTAssertEqual(try XCTUnwrap(shown["intensityFactor"] as? Double), np / 250, accuracy: 0.001)
        let zones = try XCTUnwrap(shown["powerZones"] as? [[String: Any]])
        XCTAssertEqual(zones.count, 7)
        XCTAssertEqual(zones[1]["lowWatts"] as? Double, 137.5)
        let zoneSeconds = zones.compactMap { $0["seconds"] as? Double }.reduce(0, +)
        XCTAssertEqual(zoneSeconds, try XCTUnwrap(shown["movingSeconds"] as? Double), accuracy: 1)
        ftp = try json(["ftp", "--json", "--db", db])
        XCTAssertEqual(ftp["method"] as? String, "manual")
        XCTAssertEqual((ftp["pending"] as? [String: Any])?["method"] as? String, "best20Minutes")

        let accept = try cyclelog(["ftp", "accept", "--db", db])
        XCTAssertEqual(accept.status, 0, accept.errorOutput)
        XCTAssertEqual(try json(["ftp", "--json", "--db", db])["method"] as? String, "best20Minutes")
        let again = try cyclelog(["ftp", "accept", "--db", db])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.errorOutput.contains("no automatic FTP newer than your manual value"), again.errorOutput)
        XCTAssertEqual(try cyclelog(["ftp", "set", "-5", "--db", db]).status, 64)
    }

    /// The synthetic ride's watts to whole watts, one per second (Fixtures/rides/records).
    static func syntheticWatts() throws -> [Double] {
        let text = try String(
            contentsOf: fixturesFolder.appendingPathComponent("rides/records/synthetic_cp250_w20000.csv"),
            encoding: .utf8)
        return try text.split(separator: "\n").dropFirst().map {
            try XCTUnwrap(Double($0.split(separator: ",")[1])).rounded()
        }
    }

    func testChartsAreSVGThatRenders() throws {
        let db = try database()
        let folder = (db as NSString).deletingLastPathComponent
        let ride = folder + "/ride.svg", curve = folder + "/curve.svg"
        XCTAssertEqual(try cyclelog(["chart", "1", "-o", ride, "--db", db]).status, 0)
        let curveRun = try cyclelog(["chart", "--power-curve", "--window", "5000d", "-o", curve, "--db", db])
        XCTAssertEqual(curveRun.status, 0, curveRun.errorOutput)
        // The envelope fit of these two rides puts CP above the best 20 minutes they hold (312 W), which a power held
        // for about an hour cannot be: no model is drawn.
        XCTAssertFalse(try String(contentsOfFile: curve, encoding: .utf8).contains("dashed: CP "))
        // The synthetic ride (CP 250 W, W′ 20 kJ) a day after an easy hour: the model is drawn, CP within 0.5 W
        // of 250 (whole watts), with the three efforts that pin it.
        let modelled = folder + "/modelled.sqlite"
        for (day, watts) in [(1, Array(repeating: 150.0, count: 3600)), (2, try Self.syntheticWatts())] {
            let journal = folder + "/day\(day).journal"
            try Journals.power(watts, day: day).write(toFile: journal, atomically: true, encoding: .utf8)
            let run = try cyclelog(["replay", "--db", modelled, journal])
            XCTAssertEqual(run.status, 0, run.errorOutput)
        }
        let modelledRun = try cyclelog(["chart", "--power-curve", "--window", "42d", "-o", curve, "--db", modelled])
        XCTAssertEqual(modelledRun.status, 0, modelledRun.errorOutput)

        let rideText = try String(contentsOfFile: ride, encoding: .utf8)
        for title in ["Power (W)", "Cadence (rpm)", "Speed (km/h)", "Heart rate (bpm)"] {
            XCTAssertTrue(rideText.contains(">\(title)</text>"), title)
        }
        let curveText = try String(contentsOfFile: curve, encoding: .utf8)
        XCTAssertTrue(curveText.contains("dashed: CP 250 W"), "no model of CP 250 W in the power-curve chart")
        XCTAssertEqual(curveText.components(separatedBy: "<circle").count - 1, 3)

        for file in [ride, curve] {
            XCTAssertTrue(XMLParser(contentsOf: URL(fileURLWithPath: file))?.parse() ?? false, "\(file) is not XML")
            // librsvg (installed by scripts/setup.sh) must be able to draw it.
            let render = Process()
            render.executableURL = URL(fileURLWithPath: "/usr/bin/rsvg-convert")
            render.arguments = [file, "-o", file + ".png"]
            try render.run()
            render.waitUntilExit()
            XCTAssertEqual(render.terminationStatus, 0, file)
            let png = try Data(contentsOf: URL(fileURLWithPath: file + ".png"))
            XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        }

        let none = try cyclelog(["chart", "--db", db])
        XCTAssertEqual(none.status, 64)
    }

    /// Every time a rider reads is local: the ride chart's title and the power curve's caption, in the zone of
    /// `TZ` (an independent formatter gives the expected text).
    func testChartTimesAreLocal() throws {
        let db = try database()
        let folder = (db as NSString).deletingLastPathComponent
        let shown = try cyclelog(["show", "1", "--json", "--db", db])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(shown.output.utf8)) as? [String: Any])
        let start = try XCTUnwrap(ISO8601DateFormatter().date(from: try XCTUnwrap(object["start"] as? String)))
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = TimeZone(identifier: "America/New_York")
        local.dateFormat = "yyyy-MM-dd HH:mm:ss zzz"
        let zone = ["TZ": "America/New_York"]
        XCTAssertEqual(
            try cyclelog(["chart", "1", "-o", folder + "/ride.svg", "--db", db], environment: zone).status, 0)
        let ride = try String(contentsOfFile: folder + "/ride.svg", encoding: .utf8)
        XCTAssertTrue(ride.contains("— \(local.string(from: start))"), String(ride.prefix(2000)))
        XCTAssertFalse(ride.contains("Z</text>"), "a UTC time in the chart")
        let curve = try cyclelog(
            ["chart", "--power-curve", "--window", "5000d", "-o", folder + "/curve.svg", "--db", db], environment: zone)
        XCTAssertEqual(curve.status, 0, curve.errorOutput)
        let caption = try String(contentsOfFile: folder + "/curve.svg", encoding: .utf8)
        XCTAssertTrue([" EST (", " EDT ("].contains { caption.contains($0) }, String(caption.prefix(2000)))
        // Its count of rides in words: the two rides are six years apart, so 42 days hold one.
        XCTAssertTrue(caption.contains(" (2 rides)</text>"), String(caption.prefix(2000)))
        let one = try cyclelog(
            ["chart", "--power-curve", "--window", "42d", "-o", folder + "/one.svg", "--db", db], environment: zone)
        XCTAssertEqual(one.status, 0, one.errorOutput)
        let single = try String(contentsOfFile: folder + "/one.svg", encoding: .utf8)
        XCTAssertTrue(single.contains(" (1 ride)</text>"), String(single.prefix(2000)))
    }

    /// A ride's name is outside text: with ESC, U+0001, a tab, DEL and a C1 control in it the chart is still
    /// well-formed XML (XML 1.0 §2.2 forbids C0 controls in any document) that librsvg draws, and the name shows
    /// with the escapes the terminal uses.
    func testAChartIsWellFormedWhateverTheRideIsCalled() throws {
        let db = try database()
        let name = "Ride \u{1B}[31mred\u{01}\t<&>\u{7F}\u{85} \"end\""
        let renamed = try cyclelog(["rename", "1", name, "--db", db])
        XCTAssertEqual(renamed.status, 0, renamed.errorOutput)
        let file = (db as NSString).deletingLastPathComponent + "/named.svg"
        XCTAssertEqual(try cyclelog(["chart", "1", "-o", file, "--db", db]).status, 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "a C0 control in the SVG")
        XCTAssertTrue(
            text.contains("Ride \\x1B[31mred\\x01\\x09&lt;&amp;&gt;\\x7F\\u0085 &quot;end&quot;"), text)
        XCTAssertTrue(XMLParser(contentsOf: URL(fileURLWithPath: file))?.parse() ?? false, "not XML")
        let render = Process()
        render.executableURL = URL(fileURLWithPath: "/usr/bin/rsvg-convert")
        render.arguments = [file, "-o", file + ".png"]
        render.standardError = FileHandle.nullDevice
        try render.run()
        render.waitUntilExit()
        XCTAssertEqual(render.terminationStatus, 0, "rsvg-convert refused the chart")
    }
}
