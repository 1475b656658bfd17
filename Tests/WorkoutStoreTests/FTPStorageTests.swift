import Foundation
import GRDB
import Workouts
import XCTest

@testable import WorkoutStore

/// Power curves and the FTP history in the database follow every save and delete.
final class FTPStorageTests: XCTestCase {
    let day: Int64 = 86_400 * 1_000_000

    /// Saves a ride of 1 Hz power notifications starting on `dayNumber`, as a replay would.
    @discardableResult
    func save(
        _ watts: [Double], onDay dayNumber: Int64, afterSeconds seconds: Int64 = 0, in store: WorkoutStore, name: String
    ) throws -> (Int64, Workout) {
        let start = 1_700_000_000_000_000 + dayNumber * day + seconds * 1_000_000
        var builder = WorkoutBuilder()
        for (second, value) in watts.enumerated() {
            let raw = UInt16(value.rounded())
            builder.add(
                RideEvent(
                    timeMicroseconds: start + Int64(second) * 1_000_000,
                    .notification(
                        sensor: "C0:11:22:33:44:55", characteristic: 0x2A63,
                        value: [0, 0, UInt8(raw & 0xFF), UInt8(raw >> 8)])))
        }
        let workout = try XCTUnwrap(builder.finish())
        let claim = try store.beginWorkout(syncIdentifier: name, source: name, startMicroseconds: start)
        try store.finish(claim, workout: workout, digests: .init(source: nil, content: name))
        return (claim.workoutId, workout)
    }

    /// The synthetic ride with CP 250 W and W′ 20 kJ, to whole watts (the notifications carry whole watts).
    func synthetic() throws -> [Double] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/rides/records/synthetic_cp250_w20000.csv")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").dropFirst().map {
            try XCTUnwrap(Double($0.split(separator: ",")[1]))
        }
    }

    func testCurvesAreKeptAndTheFTPFollowsSavesAndDeletes() throws {
        let store = try WorkoutStore()
        try save(Array(repeating: 150, count: 3600), onDay: 0, in: store, name: "easy")
        let (hardId, hard) = try save(try synthetic(), onDay: 1, in: store, name: "hard")
        let (laterId, _) = try save(Array(repeating: 200, count: 1800), onDay: 2, in: store, name: "later")

        // The stored curve is the ride's curve to Float32 precision.
        let stored = try XCTUnwrap(try store.rideCurves().first { $0.workoutId == hardId }).curve
        let computed = WorkoutStatistics.powerCurve(hard.samples)
        XCTAssertEqual(stored.watts.count, computed.watts.count)
        for (read, written) in zip(stored.watts, computed.watts) {
            XCTAssertEqual(read, written, accuracy: written * 1e-7)
        }

        // The whole-watt efforts sit within 0.5 W of P = 250 + 20000/t, so CP lands within 0.5 W of 250.
        let ftp = try XCTUnwrap(try store.ftpHistory().inForce(at: .max))
        XCTAssertEqual(ftp.method, .criticalPower)
        XCTAssertEqual(ftp.watts, 250, accuracy: 0.5)
        XCTAssertEqual(ftp.workoutId, hardId)
        XCTAssertEqual(ftp.efforts.map(\.workoutId), [hardId, hardId, hardId])

        // The next ride is measured against it: IF = NP / FTP, 30 min at 200 W.
        let later = try XCTUnwrap(try store.summary(laterId))
        XCTAssertEqual(try XCTUnwrap(later.intensityFactor), 200 / ftp.watts, accuracy: 1e-9)
        XCTAssertEqual(
            try XCTUnwrap(later.trainingStressScore),
            100 * later.statistics.movingSeconds / 3600 * (200 / ftp.watts) * (200 / ftp.watts), accuracy: 1e-9)
        // 200 W of about 250 W is 80 %: every second in zone 3 (tempo, 75–90 %).
        let zones = try XCTUnwrap(later.analysis?.zoneSeconds)
        XCTAssertEqual(zones[2], zones.reduce(0, +))
        XCTAssertGreaterThan(zones[2], 1790)
        // The hard ride itself started before its own estimate took effect.
        XCTAssertNil(try store.summary(hardId)?.analysis?.ftp)

        XCTAssertTrue(try store.delete(hardId))
        XCTAssertNil(try store.ftpHistory().inForce(at: .max))
    }

    func testARideSavedBeforeCurvesWereKeptGetsItsCurveOnce() throws {
        let store = try WorkoutStore()
        let (id, workout) = try save(Array(repeating: 180, count: 900), onDay: 0, in: store, name: "old")
        try store.queue.write { db in try db.execute(sql: "DELETE FROM powerCurve") }
        XCTAssertEqual(try store.rideCurves().first?.curve, WorkoutStatistics.powerCurve(workout.samples))
        let rows = try store.queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM powerCurve") }
        XCTAssertEqual(rows, 1)
        XCTAssertEqual(try store.rideCurves(maximumSeconds: 60).first?.curve.watts.count, 60)
        _ = id
    }

    /// What the estimator makes of every stored ride, computed whole: what the stored history must be.
    func assertTheStoredHistoryIsTheWholeOne(_ store: WorkoutStore, _ step: String) throws {
        let whole = FTPEstimator().history(
            try store.rideCurves(maximumSeconds: CriticalPowerFit.aerobicSeconds.upperBound))
        XCTAssertEqual(try store.ftpHistory().estimates, whole, step)
        // The record of what the history saw is every ride as it is: comparing every ride finds nothing the
        // update after the change (which compares the rides that changed and those around them) left behind.
        let unseen = try store.queue.read { db in try WorkoutStore.ScoredRide.everyChange(db).changed }
        XCTAssertEqual(unseen, [], step)
        try assertTheWeeksAreTheRidesOwn(store, step)
    }

    /// Every window read through the weeks' envelopes (`CurveWeeks`) is the one made from every ride's curve, ride
    /// for ride: windows of 7, 42 and 90 days ending at rides' starts and ends and half a week after them (some
    /// twenty ends spread over the rides), so that they cut weeks everywhere; whole curves and the FTP's 20 minutes,
    /// with the estimate of these.
    func assertTheWeeksAreTheRidesOwn(_ store: WorkoutStore, _ step: String) throws {
        let rides = try store.rideCurves()
        let halfWeek = WorkoutStore.CurveWeeks.weekMicroseconds / 2
        let ends = stride(from: rides.count - 1, through: 0, by: -max(2, rides.count / 6)).flatMap {
            [rides[$0].startMicroseconds, rides[$0].endMicroseconds, rides[$0].endMicroseconds + halfWeek]
        }
        for days in [7, 42, 90] {
            for end in ends {
                for maximumSeconds in [nil, CriticalPowerFit.aerobicSeconds.upperBound] {
                    let start = FTPWindow.start(ending: end, days: days)
                    let fromWeeks = try store.queue.read { db in
                        try WorkoutStore.CurveWeeks.envelope(
                            db, after: start, upTo: end, maximumSeconds: maximumSeconds, saving: false)
                    }
                    var whole = FTPWindow(rides, days: days, endingAt: end).envelope
                    if let maximumSeconds { whole = whole.cut(toSeconds: maximumSeconds) }
                    XCTAssertEqual(fromWeeks, whole, "\(step): \(days) days to \(end)")
                    // What the window's estimate says is the estimator's, of its rides with power alone (of the
                    // curves as the FTP reads them: its fit is what costs).
                    guard let maximumSeconds else { continue }
                    let inWindow = rides.filter { $0.startMicroseconds > start && $0.startMicroseconds <= end }.map {
                        var ride = $0
                        ride.curve.watts = Array(ride.curve.watts.prefix(maximumSeconds))
                        return ride
                    }
                    XCTAssertEqual(
                        fromWeeks.flatMap {
                            FTPWindow($0, days: days, startMicroseconds: start, endMicroseconds: end).estimate
                        },
                        FTPEstimator(windowDays: days).estimate(inWindow, at: end), "\(step): \(days) days to \(end)")
                }
            }
        }
    }

    func testTheHistoryIsComputedAgainFromTheEarliestRideThatChanged() throws {
        let store = try WorkoutStore()
        let hard = try synthetic()
        let easy = Array(repeating: 150.0, count: 3600)
        // Rides stored out of their order, with values that rise, fall once the window (42 days) lets them, and a
        // test: each step changes the history from some ride on.
        var ids: [Int64: Int64] = [:]
        for (dayNumber, watts): (Int64, [Double]) in [
            (0, easy), (1, hard), (71, hard.map { $0 * 0.92 }), (30, easy), (10, hard.map { $0 * 1.06 }), (70, easy),
        ] {
            ids[dayNumber] = try save(watts, onDay: dayNumber, in: store, name: "day \(dayNumber)").0
            try assertTheStoredHistoryIsTheWholeOne(store, "day \(dayNumber) stored")
        }
        XCTAssertEqual(try store.ftpHistory().estimates.map(\.workoutId), [ids[1], ids[10], ids[71]])

        try store.setFitnessTest(try XCTUnwrap(ids[71]), .twentyMinute)
        try assertTheStoredHistoryIsTheWholeOne(store, "day 71 declared a test")
        // The same ride recorded twice (ten minutes later, harder): the first stored counts, until the rider
        // chooses the other.
        let copy = try save(hard.map { $0 * 1.1 }, onDay: 10, afterSeconds: 600, in: store, name: "day 10 again").0
        try assertTheStoredHistoryIsTheWholeOne(store, "day 10 stored again")
        XCTAssertNotNil(try store.countAmongOverlaps(copy, nowMicroseconds: 1))
        try assertTheStoredHistoryIsTheWholeOne(store, "day 10's second copy counted")
        XCTAssertTrue(try store.delete(try XCTUnwrap(ids[1])))
        try assertTheStoredHistoryIsTheWholeOne(store, "day 1 deleted")
        // Three copies of day 30 in a chain, each overlapping the one before only: one group, which counts the first
        // stored; with the middle one deleted the other two overlap nothing and both count.
        let chain = try [0, 3000, 6000].map { seconds in
            try save(easy, onDay: 30, afterSeconds: Int64(seconds), in: store, name: "day 30 at \(seconds) s").0
        }
        try assertTheStoredHistoryIsTheWholeOne(store, "day 30's chain stored")
        XCTAssertEqual(try store.rideOverlaps().group(of: chain[2])?.counted, ids[30])
        XCTAssertTrue(try store.delete(chain[1]))
        try assertTheStoredHistoryIsTheWholeOne(store, "day 30's middle copy deleted")
        XCTAssertNil(try store.rideOverlaps().group(of: chain[2]))

        // A change to the ride of day 70 scores it and the one after it, and nothing before.
        let scored = try store.queue.write { db in
            try db.execute(sql: "UPDATE workout SET version = version + 1 WHERE id = ?", arguments: [ids[70]])
            return try WorkoutStore.refreshFTPEstimates(db)
        }
        XCTAssertEqual(scored, 2)
        try assertTheStoredHistoryIsTheWholeOne(store, "day 70 changed")
        XCTAssertEqual(try store.queue.write { db in try WorkoutStore.refreshFTPEstimates(db) }, 0)
    }

    /// A window of rides (the FTP history's update after a new ride, the power curves' 42 and 90 days) is read
    /// through the start's index, never through an index on the status, which would read every complete ride:
    /// SQLite has no statistics of the table and takes an equality for the most selective term it can search.
    func testAWindowOfRidesIsReadByTheStartsIndex() throws {
        let store = try WorkoutStore()
        for (query, arguments) in [
            (WorkoutStore.windowRidesQuery, [0, 0]), (WorkoutStore.rideCurvesQuery, [0, 0, 0]),
        ] {
            let plan = try store.queue.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + query, arguments: StatementArguments(arguments)).map {
                    $0["detail"] as String
                }
            }
            XCTAssertTrue(plan.contains { $0.contains("USING INDEX workoutByStart (startMicroseconds>?") }, "\(plan)")
        }
    }

    /// The check every writing command makes, that the FTP history follows the complete rides, reads one row of
    /// counters (migration v27), not every ride: its answer changes with a ride stored, a new version, a ride
    /// deleted and (its last word) a choice among overlapping rides, and not with a ride still recording nor with the
    /// refresh that stores it; the rides changed since are listed for the update of the history, which takes them.
    /// Without the counters' row, it reads the index of the rides' versions alone and still changes with a ride
    /// stored.
    func testTheHistorysCheckReadsTheRidesCountersAlone() throws {
        let store = try WorkoutStore()
        func basis() throws -> String { try store.queue.read { db in try WorkoutStore.ftpBasis(db) } }
        func current() throws -> Bool { try store.queue.read { db in try WorkoutStore.ftpHistoryIsCurrent(db) } }
        func changedRides() throws -> [Int64] {
            try store.queue.read { db in try Int64.fetchAll(db, sql: "SELECT workoutId FROM rideChange") }
        }
        let empty = try basis()
        let (id, _) = try save(Array(repeating: 150.0, count: 600), onDay: 0, in: store, name: "one")
        let one = try basis()
        XCTAssertNotEqual(one, empty)
        XCTAssertTrue(try current(), "the refresh that stored the ride left its basis behind")
        try store.queue.write { db in
            try db.execute(sql: "UPDATE workout SET version = version + 1 WHERE id = ?", arguments: [id])
        }
        let newVersion = try basis()
        XCTAssertNotEqual(newVersion, one)
        XCTAssertFalse(try current())
        XCTAssertEqual(try changedRides(), [id], "the update of the history reads this ride alone")
        XCTAssertEqual(newVersion.split(separator: " ").last, one.split(separator: " ").last, "no choice was made")
        // A ride recorded again leaves the rides the history is computed from, and its changes while recording
        // are not theirs, until it is complete again.
        func execute(_ sql: String) throws {
            try store.queue.write { db in try db.execute(sql: sql, arguments: [id]) }
        }
        try execute("UPDATE workout SET status = 'recording' WHERE id = ?")
        let recording = try basis()
        XCTAssertNotEqual(recording, newVersion)
        try execute("UPDATE workout SET version = version + 1 WHERE id = ?")
        XCTAssertEqual(try basis(), recording)
        try execute("UPDATE workout SET status = 'complete' WHERE id = ?")
        let recorded = try basis()
        XCTAssertNotEqual(recorded, recording)
        let (other, _) = try save(Array(repeating: 150.0, count: 600), onDay: 0, in: store, name: "two")
        XCTAssertEqual(try changedRides(), [], "the update of the history took them")
        let two = try basis()
        XCTAssertNotEqual(two, recorded)
        XCTAssertNotNil(try store.countAmongOverlaps(other, nowMicroseconds: 1))
        let chosen = try basis()
        XCTAssertNotEqual(chosen.split(separator: " ").last, two.split(separator: " ").last)
        XCTAssertTrue(try current())
        XCTAssertTrue(try store.delete(other))
        XCTAssertNotEqual(try basis(), chosen)
        XCTAssertNotEqual(
            try basis().split(separator: " ").last, chosen.split(separator: " ").last, "the choice went with its ride")

        try store.queue.write { db in try db.execute(sql: "DELETE FROM rideGeneration") }
        let plan = try store.queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + WorkoutStore.ftpBasisQuery).map { $0["detail"] as String }
        }
        XCTAssertTrue(plan.contains { $0.contains("COVERING INDEX workoutCompleteVersions") }, "\(plan)")
        let withoutCounters = try basis()
        _ = try save(Array(repeating: 150.0, count: 600), onDay: 3, in: store, name: "three")
        XCTAssertNotEqual(try basis(), withoutCounters)
    }

    /// The overlaps a page of rides is listed with (`rideOverlaps(of:)`, read around the page through the ends'
    /// index) are the whole groups of its rides, as the grouping of every ride has them: a chain of three rides,
    /// each overlapping the next, found whole from its last ride alone; a pair; rides that overlap nothing; the
    /// rider's choice of the ride that counts.
    func testAPagesOverlapsAreTheWholeGroupsOfItsRides() throws {
        let store = try WorkoutStore()
        // (start, minutes): a chain 0–60, 50–110, 100–160; alone at 300; a pair 400–460, 450–470; alone at 1000.
        var ids: [Int64] = []
        for (minute, minutes) in [(0, 60), (50, 60), (100, 60), (300, 10), (400, 60), (450, 20), (1000, 60)] {
            let watts = Array(repeating: 150.0, count: minutes * 60)
            ids.append(try save(watts, onDay: 0, afterSeconds: Int64(minute * 60), in: store, name: "at \(minute)").0)
        }
        func same(_ page: [Int64], _ label: String) throws {
            let whole = try store.rideOverlaps(), around = try store.rideOverlaps(of: page)
            for id in page {
                XCTAssertEqual(around.group(of: id), whole.group(of: id), "\(label): ride \(id)")
                XCTAssertEqual(around.countedInstead(of: id), whole.countedInstead(of: id), "\(label): ride \(id)")
            }
        }
        XCTAssertEqual(try store.rideOverlaps(of: [ids[2]]).group(of: ids[2])?.rides.map(\.id), Array(ids[0...2]))
        XCTAssertEqual(try store.rideOverlaps(of: [ids[2]]).countedInstead(of: ids[2]), ids[0])
        for id in ids { try same([id], "ride \(id) alone") }
        try same(Array(ids.suffix(3)), "the newest three")
        try same(ids, "every ride")
        XCTAssertNil(try store.rideOverlaps(of: [ids[3], ids[6]]).group(of: ids[3]))
        XCTAssertNotNil(try store.countAmongOverlaps(ids[1], nowMicroseconds: 1))
        XCTAssertEqual(try store.rideOverlaps(of: [ids[2]]).countedInstead(of: ids[2]), ids[1])
        try same([ids[0]], "after the rider chose the middle ride")
        XCTAssertEqual(try store.rideOverlaps(of: []), RideOverlaps([]))
        // More rides than a statement takes (`list --all` over a long history): read with every ride, alike.
        let many = (0..<WorkoutStore.maximumRidesAround + 1).map { ids[$0 % ids.count] }
        XCTAssertEqual(try store.rideOverlaps(of: many), try store.rideOverlaps())
    }

    /// The window `ftp` and the power-curve charts show, read alone (`curveWindow`), is the one made from every
    /// ride's curve: its end the newest end among the rides that count (a longer copy of the newest ride, set
    /// aside, passed over until the rider chooses it), its rides and its curve, for windows of a week, 42 days and
    /// a year.
    func testTheCurveWindowReadAloneIsTheOneMadeFromEveryRide() throws {
        let store = try WorkoutStore()
        XCTAssertEqual(try store.curveWindow(days: 42).rideCount, 0)
        let hard = try synthetic()
        for dayNumber: Int64 in [0, 30, 55, 60, 61] {
            try save(
                hard.map { $0 * (1 + Double(dayNumber) / 500) }, onDay: dayNumber, in: store, name: "day \(dayNumber)")
        }
        // The same ride recorded twice, the copy ten minutes later and an hour longer.
        let copy = try save(
            hard.map { $0 * 1.2 } + Array(repeating: 150, count: 3600), onDay: 61, afterSeconds: 600, in: store,
            name: "day 61 again"
        ).0
        func same(_ label: String) throws {
            for days in [7, 42, 365] {
                let alone = try store.curveWindow(days: days)
                let whole = FTPWindow(endingWithNewestOf: try store.rideCurves(), days: days)
                XCTAssertEqual(alone.endMicroseconds, whole.endMicroseconds, "\(label), \(days) days")
                XCTAssertEqual(alone.startMicroseconds, whole.startMicroseconds, "\(label), \(days) days")
                XCTAssertEqual(alone.envelope, whole.envelope, "\(label), \(days) days")
                XCTAssertEqual(alone.estimate, whole.estimate, "\(label), \(days) days")
            }
        }
        try same("the first copy counts")
        XCTAssertFalse(try store.curveWindow(days: 42).envelope.holders.contains { $0.workoutId == copy })
        XCTAssertNotNil(try store.countAmongOverlaps(copy, nowMicroseconds: 1))
        try same("the rider chose the copy")
        XCTAssertTrue(try store.curveWindow(days: 42).envelope.holders.contains { $0.workoutId == copy })
        XCTAssertEqual(try store.curveWindow(days: 7).rideCount, 3)
    }

    /// Each week's envelope follows its rides as they are stored, deleted, set aside among overlapping ones and
    /// chosen back; the weeks are made whole where there were none (after the migration that adds them); a window
    /// reads the rides themselves while the weeks may not follow them (the FTP history not current) or a week's
    /// record is damaged; and a window that spans whole weeks reads their envelopes.
    func testEachWeeksBestFollowsItsRides() throws {
        let store = try WorkoutStore()
        let hard = Array(try synthetic().prefix(1800))
        // Sixteen weeks of three rides, each harder or easier, every seventh one without power (a power meter that
        // said 0 W throughout), every fifth a long easy one that outlasts the hard ones.
        var ids: [Int64] = []
        for number in 0..<48 {
            let factor = 0.9 + Double((number * 7) % 11) / 50
            let watts: [Double] =
                number % 7 == 3
                ? Array(repeating: 0, count: 1200)
                : number % 5 == 4 ? Array(repeating: 140 * factor, count: 5400) : hard.map { ($0 * factor).rounded() }
            ids.append(try save(watts, onDay: Int64(number * 7 / 3), in: store, name: "ride \(number)").0)
        }
        // Then a week of two rides without a power meter at all (heart rate alone): its curve is empty (and a part of
        // it read as NULL).
        for dayNumber: Int64 in [115, 116] {
            let start = 1_700_000_000_000_000 + dayNumber * day
            var builder = WorkoutBuilder()
            for second in 0..<600 {
                builder.add(
                    RideEvent(
                        timeMicroseconds: start + Int64(second) * 1_000_000,
                        .notification(sensor: "D4:22:33:44:55:66", characteristic: 0x2A37, value: [0, 140])))
            }
            let claim = try store.beginWorkout(
                syncIdentifier: "heart \(dayNumber)", source: "heart \(dayNumber)", startMicroseconds: start)
            try store.finish(
                claim, workout: try XCTUnwrap(builder.finish()),
                digests: .init(source: nil, content: "heart \(dayNumber)"))
        }
        // And a ride the week after, so that windows hold that week whole.
        ids.append(try save(hard, onDay: 125, in: store, name: "after the heart-rate week").0)
        let emptyWeek = try store.queue.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM powerCurveWeek WHERE rides = 2 AND length(watts) = 0")
        }
        XCTAssertEqual(emptyWeek, 1)
        func weeks() throws -> Int {
            try store.queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM powerCurveWeek") } ?? 0
        }
        XCTAssertGreaterThanOrEqual(try weeks(), 15)
        try assertTheStoredHistoryIsTheWholeOne(store, "48 rides stored")
        // The 90 days' window, as the mirror reads it, holds its whole weeks' envelopes.
        let window = try store.curveWindow(days: 90)
        XCTAssertEqual(
            window.rideCount, try store.rideCurves().count { $0.startMicroseconds > window.startMicroseconds })

        XCTAssertTrue(try store.delete(ids[30]))
        try assertTheStoredHistoryIsTheWholeOne(store, "a ride deleted")
        let copy = try save(hard.map { $0 * 1.3 }, onDay: 21, afterSeconds: 900, in: store, name: "ride 9 again").0
        try assertTheStoredHistoryIsTheWholeOne(store, "a ride stored again, later and harder")
        XCTAssertNotNil(try store.countAmongOverlaps(copy, nowMicroseconds: 1))
        try assertTheStoredHistoryIsTheWholeOne(store, "the rider chose the copy")
        try store.setFitnessTest(ids[40], .twentyMinute)
        try assertTheStoredHistoryIsTheWholeOne(store, "a ride declared a test")

        // No weeks yet, as after the migration: the next update makes every one.
        let made = try store.queue.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM powerCurveWeek ORDER BY week")
        }
        try store.queue.write { db in
            try db.execute(sql: "DELETE FROM powerCurveWeek; DELETE FROM derivedState WHERE name = 'powerCurveWeeks'")
            XCTAssertEqual(try WorkoutStore.refreshFTPEstimates(db), 0)
        }
        XCTAssertEqual(
            try store.queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM powerCurveWeek ORDER BY week") }, made
        )

        // A ride stored by a command that leaves the history to be brought up to date (as a batch does until its
        // end): the weeks are not read until it is.
        let (end, start) = (window.endMicroseconds, window.startMicroseconds)
        func fromWeeks() throws -> CurveEnvelope? {
            try store.queue.read { db in
                try WorkoutStore.CurveWeeks.envelope(db, after: start, upTo: end, maximumSeconds: nil, saving: false)
            }
        }
        XCTAssertTrue(try fromWeeks() != nil)
        try store.queue.write { db in
            try db.execute(sql: "UPDATE workout SET version = version + 1 WHERE id = ?", arguments: [ids[44]])
        }
        XCTAssertTrue(try fromWeeks() == nil)
        try store.refreshFTPEstimates()
        XCTAssertTrue(try fromWeeks() != nil)

        // A damaged week (its sources not whole runs): the window is read from its rides, and is the whole one.
        try store.queue.write { db in
            try db.execute(
                sql: """
                    UPDATE powerCurveWeek SET sources = substr(sources, 1, 7)
                    WHERE week = (SELECT max(week) - 2 FROM powerCurveWeek)
                    """)
        }
        XCTAssertTrue(try fromWeeks() == nil)
        let whole = FTPWindow(endingWithNewestOf: try store.rideCurves(), days: 90)
        XCTAssertEqual(try store.curveWindow(days: 90).envelope, whole.envelope)

        // Made again, then a week's count that is not a number (a foreign record): read from its rides too, never
        // an error.
        try store.queue.write { db in
            try db.execute(sql: "DELETE FROM derivedState WHERE name = 'powerCurveWeeks'")
            _ = try WorkoutStore.refreshFTPEstimates(db)
        }
        XCTAssertTrue(try fromWeeks() != nil)
        try store.queue.write { db in
            try db.execute(
                sql: "UPDATE powerCurveWeek SET rides = 'many' WHERE week = (SELECT max(week) - 3 FROM powerCurveWeek)")
        }
        XCTAssertTrue(try fromWeeks() == nil)
        XCTAssertEqual(try store.curveWindow(days: 90).envelope, whole.envelope)
    }

    func testManualValuesAndAcceptanceAreKept() throws {
        let store = try WorkoutStore()
        // The values a time's answers depend on, read alone (what `cyclelog ftp` reads without --history at `.max`,
        // a ride's page at its start and now), say what the whole history says at that time, at every step: at each
        // value's moment, just before it, and each setting's moment.
        func aloneAtTimes(_ step: String) throws {
            let whole = try store.ftpHistory()
            XCTAssertNil(try store.ftpHistory(asOf: []).estimates.first, step)
            let manual = whole.settings.map { setting in
                switch setting {
                case .manual(_, let from): from
                case .accept(let when): when
                }
            }
            let times =
                [0, .max] + manual
                + whole.estimates.flatMap { [$0.effectiveMicroseconds - 1, $0.effectiveMicroseconds] }
            for time in times {
                let alone = try store.ftpHistory(asOf: [time, .max])
                XCTAssertLessThanOrEqual(alone.estimates.count, 4, step)
                XCTAssertEqual(alone.inForce(at: time), whole.inForce(at: time), "\(step), at \(time)")
                XCTAssertEqual(alone.pending(at: time), whole.pending(at: time), "\(step), at \(time)")
                XCTAssertEqual(alone.criticalPower(at: time), whole.criticalPower(at: time), "\(step), at \(time)")
                XCTAssertEqual(alone.inForce(at: .max), whole.inForce(at: .max), "\(step), at \(time)")
            }
            XCTAssertEqual(try store.ftpHistory(asOf: [.max]).estimates.last, whole.estimates.last, step)
        }
        try aloneAtTimes("nothing stored")
        try store.setManualFTP(watts: 240, fromMicroseconds: 0, nowMicroseconds: 1)
        XCTAssertEqual(try store.ftpHistory().inForce(at: .max)?.watts, 240)
        XCTAssertNil(try store.acceptPendingFTP(nowMicroseconds: 2))
        try save(Array(repeating: 150, count: 3600), onDay: 0, in: store, name: "easy")
        try save(try synthetic(), onDay: 1, in: store, name: "hard")
        XCTAssertEqual(try store.ftpHistory().inForce(at: .max)?.method, .manual)
        XCTAssertEqual(try store.ftpHistory().pending(at: .max)?.method, .criticalPower)
        try aloneAtTimes("a manual value, newer automatic ones waiting")
        XCTAssertEqual(try store.acceptPendingFTP(nowMicroseconds: 3)?.method, .criticalPower)
        XCTAssertEqual(try store.ftpHistory().inForce(at: .max)?.method, .criticalPower)
        try aloneAtTimes("accepted")
        // A harder ride (10 % more power throughout) a few days on: a newer automatic value, now in force.
        try save(try synthetic().map { $0 * 1.1 }, onDay: 3, in: store, name: "harder")
        XCTAssertGreaterThan(try store.ftpHistory().estimates.count, 1)
        try aloneAtTimes("a newer automatic value")
        // A declared 20-minute test after it: the newest value, without a critical-power model, so that W′ balance
        // at its time still comes from the one before.
        let (testId, _) = try save(Array(repeating: 280, count: 1500), onDay: 5, in: store, name: "test")
        try store.setFitnessTest(testId, .twentyMinute)
        let newest = try XCTUnwrap(try store.ftpHistory().estimates.last)
        XCTAssertEqual(newest.method, .best20Minutes)
        XCTAssertNil(newest.criticalPower)
        try aloneAtTimes("a declared test")
        try store.setManualFTP(watts: 300, fromMicroseconds: 4, nowMicroseconds: 4)
        try aloneAtTimes("a later manual value")
    }
}
