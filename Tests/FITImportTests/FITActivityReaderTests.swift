import FIT
import FITImport
import Formats
import TestSupport
import Workouts
import XCTest

/// The four real rides' FIT files read as workouts, checked against what their devices wrote (`*.device.json`),
/// their record streams (`*.records.csv`) and the independent oracle (`*.oracle.json`), all made without cyclelog.
final class FITActivityReaderTests: XCTestCase {
    /// Record messages per file, as `../shared/data/rides/README.md` counts them.
    let recordCounts = [
        "sweatpy_4078723797": 8357, "fitparse_Edge810-Vector-2013-08-16-15-35-10": 4700,
        "sweatpy_6449921903_ACTIVITY": 199, "sweatpy_2020-06-01-16-52-40": 96,
    ]

    func activity(_ ride: String) throws -> (ImportedActivity, [UInt8]) {
        let bytes = try [UInt8](Data(contentsOf: RideRecords.fitFile(ride)))
        return (try XCTUnwrap(try FITActivityReader.read(bytes).first), bytes)
    }

    func session(_ ride: String) throws -> [String: Any] {
        let sessions = try XCTUnwrap(try RideRecords.device(ride)["fit_session_summary_from_device"] as? [Any])
        return try XCTUnwrap(sessions.first as? [String: Any])
    }

    /// Seconds since the first record at which the device's timer started and stopped.
    func timerEvents(_ ride: String) throws -> [(seconds: Int, start: Bool)] {
        let events = try XCTUnwrap(
            try RideRecords.device(ride)["timer_events_seconds_since_first_record"] as? [[String: Any]])
        return try events.map {
            (try XCTUnwrap($0["seconds"] as? Int), try XCTUnwrap($0["event_type"] as? String) == "start")
        }
    }

    func testEveryRecordIsReadAndTheDevicesTotalsAreKept() throws {
        for ride in RideRecords.realRides {
            let (activity, bytes) = try activity(ride)
            XCTAssertEqual(try FITDecoder.messages(bytes).filter { $0.global == 20 }.count, recordCounts[ride], ride)
            let device = try session(ride)
            let statistics = activity.workout.statistics
            XCTAssertEqual(statistics.elapsedSeconds, try RideRecords.number(device, "total_elapsed_time"), ride)
            XCTAssertEqual(statistics.movingSeconds, try RideRecords.number(device, "total_timer_time"), ride)
            XCTAssertEqual(
                statistics.distanceMeters, try RideRecords.number(device, "total_distance"), accuracy: 1e-9, ride)
            XCTAssertEqual(statistics.workJoules, try RideRecords.number(device, "total_work"), ride)
            let startTime = (device["start_time"] as? String ?? "").replacingOccurrences(of: " ", with: "T") + "Z"
            let start = try XCTUnwrap(UTCTime.parse(startTime), ride)
            XCTAssertEqual(activity.workout.startMicroseconds, start, ride)
            XCTAssertNotNil(activity.fileIdentity, ride)
        }
    }

    func testEachSecondHoldsItsRecordAndTheTimerMakesThePauses() throws {
        for ride in RideRecords.realRides {
            let (activity, _) = try activity(ride)
            let samples = activity.workout.samples
            let records = try RideRecords.columns(ride)
            // The records start with the ride: each second holds the record of that second.
            for (second, record) in records.enumerated() where second < samples.count {
                guard let watts = record.watts else { continue }
                XCTAssertEqual(samples[second].powerWatts, watts, "\(ride) second \(second)")
                XCTAssertEqual(samples[second].heartRateBPM, record.heartRate, "\(ride) second \(second)")
            }
            // On the timer from each start up to its stop; the last stop ends the ride.
            let timer = try timerEvents(ride)
            var running = [Bool](repeating: false, count: samples.count)
            for (start, stop) in zip(timer, timer.dropFirst()) where start.start && !stop.start {
                for second in start.seconds..<stop.seconds { running[second] = true }
            }
            XCTAssertEqual(samples.map(\.isRunning), running, ride)
            XCTAssertEqual(samples.count, timer.last?.seconds, ride)
            let pauses = activity.workout.events.filter { $0.control == .pause || $0.control == .resume }
            let expected = timer.dropFirst().dropLast().map { $0.start ? WorkoutControl.resume : .pause }
            XCTAssertEqual(pauses.map(\.control), expected, ride)
            XCTAssertEqual(
                pauses.map { Int(($0.timeMicroseconds - activity.workout.startMicroseconds) / 1_000_000) },
                timer.dropFirst().dropLast().map(\.seconds), ride)
        }
    }

    func testContinuousRidesReproduceTheOraclesNormalizedPowerAndPowerCurve() throws {
        for ride in RideRecords.continuousRides {
            let statistics = try activity(ride).0.workout.statistics
            let oracle = try RideRecords.oracle(ride)
            XCTAssertEqual(
                try XCTUnwrap(statistics.normalizedPowerWatts),
                try RideRecords.number(oracle, "normalized_power_watts", "numpy_reference_trainingpeaks"),
                accuracy: 0.01, ride)
            for duration in [1, 5, 60, 300, 1200, 3600] {
                XCTAssertEqual(
                    try XCTUnwrap(statistics.powerCurveWatts[duration], "\(ride) \(duration) s"),
                    try RideRecords.number(oracle, "mmp_watts", "\(duration)", "numpy_reference"), accuracy: 0.01,
                    "\(ride) \(duration) s")
            }
        }
    }

    /// Averages and NP are taken over the timer's seconds: the records from each start up to its stop. (The
    /// oracle takes every record, including one written at the instant the timer stopped, and on paused rides
    /// joins the stretches or fills the pauses with zeros.)
    func testAveragesAndNormalizedPowerAreTakenOverTheTimersSeconds() throws {
        for ride in RideRecords.realRides {
            let records = try RideRecords.columns(ride)
            let timer = try timerEvents(ride)
            var onTimer: [Double?] = []
            for (start, stop) in zip(timer, timer.dropFirst()) where start.start && !stop.start {
                onTimer += records[start.seconds..<min(stop.seconds, records.count)].map(\.watts)
            }
            // NP by its definition (30-s rolling means over full windows, fourth power, mean, fourth root) and the
            // average, both over the records with power: the gap rule (Docs/reference/workouts.md) leaves a second without power out.
            let measured = onTimer.compactMap { $0 }, watts = measured
            let windows = (0...(watts.count - 30)).map { watts[$0..<($0 + 30)].reduce(0, +) / 30 }
            let expected = pow(windows.map { pow($0, 4) }.reduce(0, +) / Double(windows.count), 0.25)
            let statistics = try activity(ride).0.workout.statistics
            XCTAssertEqual(try XCTUnwrap(statistics.normalizedPowerWatts), expected, accuracy: 1e-9, ride)
            XCTAssertEqual(
                try XCTUnwrap(statistics.averagePowerWatts), measured.reduce(0, +) / Double(measured.count),
                accuracy: 1e-9, ride)
        }
    }

    func testFilesThatAreNotRidesAreRefused() {
        func file(type: UInt64, sport: UInt64) -> [UInt8] {
            var fit = FITEncoder()
            fit.define(local: 0, global: 0, fields: [.init(0, .enumeration)])
            fit.write(local: 0, [.number(type)])
            fit.define(local: 1, global: 20, fields: [.init(253, .uint32), .init(7, .uint16)])
            fit.write(local: 1, [.number(1_000_000_000), .number(200)])
            fit.define(local: 2, global: 18, fields: [.init(5, .enumeration)])
            fit.write(local: 2, [.number(sport)])
            return fit.file()
        }
        XCTAssertNoThrow(try FITActivityReader.read(file(type: 4, sport: 2)))
        // FIT file type 6 is a course, sport 1 is running (FIT profile, types file and sport).
        XCTAssertThrowsError(try FITActivityReader.read(file(type: 6, sport: 2))) {
            XCTAssertTrue("\($0)".contains("not an activity"), "\($0)")
        }
        XCTAssertThrowsError(try FITActivityReader.read(file(type: 4, sport: 1))) {
            XCTAssertTrue("\($0)".contains("running activity, not a ride"), "\($0)")
        }
    }

    /// A session whose elapsed time is shorter than its timer time contradicts itself; the records' span decides
    /// which total is wrong, and the ride's times agree with its records either way.
    func testTotalsThatContradictEachOtherAreDecidedByTheRecordsSpan() throws {
        func ride(elapsedSeconds: UInt64, timerSeconds: UInt64) throws -> ImportedActivity {
            var file = FITEncoder()
            file.define(local: 1, global: 20, fields: [.init(253, .uint32), .init(7, .uint16)])
            for second: UInt64 in 0..<2760 { file.write(local: 1, [.number(1_000_000_000 + second), .number(180)]) }
            // session (18): timestamp, start_time, total_elapsed_time and total_timer_time in ms (FIT profile).
            file.define(
                local: 2, global: 18,
                fields: [.init(253, .uint32), .init(2, .uint32), .init(7, .uint32), .init(8, .uint32)])
            file.write(
                local: 2,
                [
                    .number(1_000_002_760), .number(1_000_000_000), .number(elapsedSeconds * 1000),
                    .number(timerSeconds * 1000),
                ])
            return try XCTUnwrap(try FITActivityReader.read(file.file()).first)
        }
        // GoldenCheetah's test_rides_14582164182.fit: elapsed 27:12, timer 46:00, records over 46:00.
        let shortElapsed = try ride(elapsedSeconds: 1632, timerSeconds: 2760).workout.statistics
        XCTAssertEqual(shortElapsed.elapsedSeconds, 2760)
        XCTAssertEqual(shortElapsed.movingSeconds, 2760)
        XCTAssertTrue(
            shortElapsed.corrections.contains {
                $0.contains("elapsed time 27:12 is shorter than its timer time 46:00")
            },
            "\(shortElapsed.corrections)")
        // The other way round: the timer is what disagrees with the records.
        let longTimer = try ride(elapsedSeconds: 2760, timerSeconds: 9000).workout.statistics
        XCTAssertEqual(longTimer.elapsedSeconds, 2760)
        XCTAssertEqual(longTimer.movingSeconds, 2760)
        XCTAssertTrue(
            longTimer.corrections.contains { $0.contains("timer time 2:30:00 is longer") }, "\(longTimer.corrections)")
        // Totals that agree are kept as the device wrote them.
        let agreeing = try ride(elapsedSeconds: 2800, timerSeconds: 2700).workout.statistics
        XCTAssertEqual(agreeing.elapsedSeconds, 2800)
        XCTAssertEqual(agreeing.movingSeconds, 2700)
        XCTAssertTrue(agreeing.corrections.isEmpty, "\(agreeing.corrections)")
    }

    func testRecordsFromABrokenClockAreJudgedByContinuityNotBySpan() throws {
        // 100 records a second apart, then one dated 30 days later: the stray is left out, the ride kept.
        var late = FITEncoder()
        late.define(local: 1, global: 20, fields: [.init(253, .uint32), .init(7, .uint16)])
        for second: UInt64 in 0..<100 { late.write(local: 1, [.number(1_000_000_000 + second), .number(200)]) }
        late.write(local: 1, [.number(1_000_000_000 + 30 * 86_400), .number(210)])
        let lateRide = try XCTUnwrap(try FITActivityReader.read(late.file()).first)
        XCTAssertEqual(lateRide.workout.samples.count, 100)
        XCTAssertTrue(
            lateRide.notes.contains { $0.contains("29 days after the rest of the ride") }, "\(lateRide.notes)")
        // Three records, then the ride 27 days later (sports-lib's 27-days-activity.fit has this shape).
        var early = FITEncoder()
        early.define(local: 1, global: 20, fields: [.init(253, .uint32), .init(7, .uint16)])
        for second: UInt64 in 0..<3 { early.write(local: 1, [.number(1_000_000_000 + second), .number(100)]) }
        for second: UInt64 in 0..<600 {
            early.write(local: 1, [.number(1_000_000_000 + 27 * 86_400 + second), .number(250)])
        }
        let earlyRide = try XCTUnwrap(try FITActivityReader.read(early.file()).first)
        XCTAssertEqual(earlyRide.workout.samples.count, 600)
        XCTAssertEqual(earlyRide.workout.statistics.averagePowerWatts, 250)
        XCTAssertTrue(earlyRide.notes.contains { $0.contains("27 days before the rest") }, "\(earlyRide.notes)")
    }
}
