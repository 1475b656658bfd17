import TestSupport
import XCTest

@testable import Workouts

/// The automatic FTP and its guards on rides with known answers; the rider's manual values and acceptance.
final class FTPEstimatorTests: XCTestCase {
    let day: Int64 = 86_400 * 1_000_000
    let start: Int64 = 1_700_000_000 * 1_000_000

    /// A stored ride as the store builds it: 1 Hz samples through the same curve code (spike filter included).
    func ride(_ id: Int64, onDay number: Int64, _ watts: [Double], test: FitnessTest? = nil) -> RideCurve {
        let samples = watts.enumerated().map { SecondSample(second: $0.offset, powerWatts: $0.element) }
        let begin = start + number * day
        return RideCurve(
            workoutId: id, startMicroseconds: begin, endMicroseconds: begin + Int64(watts.count) * 1_000_000,
            fitnessTest: test, curve: WorkoutStatistics.powerCurve(samples))
    }

    func easy(_ watts: Double = 150, seconds: Int = 3600) -> [Double] { Array(repeating: watts, count: seconds) }

    func testTheSyntheticRideGivesItsCriticalPowerAsFTP() throws {
        let synthetic = try RideRecords.watts("synthetic_cp250_w20000")
        let history = FTPEstimator().history([ride(1, onDay: 0, easy()), ride(2, onDay: 1, synthetic)])
        let ftp = try XCTUnwrap(history.last)
        XCTAssertEqual(ftp.method, .criticalPower)
        XCTAssertEqual(ftp.watts, 250, accuracy: 0.1)
        XCTAssertEqual(try XCTUnwrap(ftp.criticalPower).wPrimeJoules, 20_000, accuracy: 10)
        XCTAssertEqual(ftp.efforts.map(\.durationSeconds), [180, 720, 1200])
        XCTAssertEqual(Set(ftp.efforts.map(\.workoutId)), [2])
        // The CSV holds watts to 0.001 W.
        XCTAssertEqual(try XCTUnwrap(ftp.best20MinuteWatts), 250 + 20_000.0 / 1200, accuracy: 0.0005)
        XCTAssertEqual(ftp.effectiveMicroseconds, start + day + Int64(synthetic.count) * 1_000_000)
    }

    func testOneSpikeOfTwoThousandWattsChangesNothing() throws {
        let synthetic = try RideRecords.watts("synthetic_cp250_w20000")
        // One second of 2000 W in the middle of each all-out effort and in the endurance block.
        var spiked = synthetic
        for second in [900 + 10 + 60 + 900 + 90, 6000, 10_000] { spiked[second] = 2000 }
        let clean = try XCTUnwrap(
            FTPEstimator().history([ride(1, onDay: 0, easy()), ride(2, onDay: 1, synthetic)]).last)
        let withSpikes = try XCTUnwrap(
            FTPEstimator().history([ride(1, onDay: 0, easy()), ride(2, onDay: 1, spiked)]).last)
        XCTAssertEqual(withSpikes.watts, clean.watts)
        XCTAssertEqual(withSpikes.criticalPower, clean.criticalPower)
    }

    func testTheGuardsRefuseTooLittleEvidence() {
        let synthetic = (try? RideRecords.watts("synthetic_cp250_w20000")) ?? []
        // One ride is not enough, however good.
        XCTAssertEqual(FTPEstimator().history([ride(1, onDay: 0, synthetic)]), [])
        // Two rides 43 days apart never share a window.
        XCTAssertEqual(FTPEstimator().history([ride(1, onDay: 0, easy()), ride(2, onDay: 43, synthetic)]), [])
        // Rides shorter than 12 minutes cannot pin CP.
        XCTAssertEqual(
            FTPEstimator().history([ride(1, onDay: 0, easy(seconds: 600)), ride(2, onDay: 1, easy(300, seconds: 700))]),
            [])
        // CP under 100 W is not a cyclist's CP.
        let weak = easy(60, seconds: 600) + easy(150, seconds: 240) + easy(80, seconds: 1200)
        XCTAssertEqual(FTPEstimator().history([ride(1, onDay: 0, weak), ride(2, onDay: 1, weak)]), [])
        // Steady riding without a short hard effort says nothing about W′.
        XCTAssertEqual(FTPEstimator().history([ride(1, onDay: 0, easy()), ride(2, onDay: 1, easy(220))]), [])
    }

    func testATestSetsFTPAndOnlyANearMaximalEffortMovesItAgain() throws {
        let synthetic = try RideRecords.watts("synthetic_cp250_w20000")
        let twentyMinuteTest = easy(120, seconds: 600) + easy(240, seconds: 1200) + easy(100, seconds: 600)
        let history = FTPEstimator().history([
            ride(1, onDay: 0, easy()), ride(2, onDay: 1, synthetic),
            ride(3, onDay: 2, twentyMinuteTest, test: .twentyMinute),
            // The window's fit still says 250 W, but this easy ride holds no effort near it: 228 W stays.
            ride(4, onDay: 3, easy()),
            ride(5, onDay: 4, synthetic),
        ])
        XCTAssertEqual(history.map(\.method), [.criticalPower, .best20Minutes, .criticalPower])
        XCTAssertEqual(history.map(\.workoutId), [2, 3, 5])
        XCTAssertEqual(history[1].watts, 0.95 * 240, accuracy: 1e-9)
        XCTAssertEqual(history[2].watts, 250, accuracy: 0.1)
    }

    func testARampTestGivesThreeQuartersOfItsBestMinute() throws {
        // 1-minute steps of 20 W from 100 W to 400 W, then failure.
        let ramp = (0..<16).flatMap { easy(100 + 20 * Double($0), seconds: 60) } + easy(0, seconds: 120)
        let ftp = try XCTUnwrap(FTPEstimator().history([ride(1, onDay: 0, ramp, test: .ramp)]).last)
        XCTAssertEqual(ftp.method, .rampTest)
        XCTAssertEqual(ftp.watts, 0.75 * 400, accuracy: 1e-9)
    }

    func testAGuidedTestThatDidNotReachItsScoredPartLeavesTheFTPInForce() throws {
        // The FTP in force from a ramp ridden into its hard part (a best minute of 300 W), then a ramp stopped in
        // its second minute (106 W), then one whose meter sent power for half of its scored minutes.
        var first = ride(1, onDay: 0, easy(300, seconds: 660), test: .ramp)
        first.scoredPart = .init(steps: 46, stepsRiddenToTheEnd: 6, seconds: 360, secondsWithPower: 360)
        var short = ride(2, onDay: 1, easy(106, seconds: 380), test: .ramp)
        short.scoredPart = .init(steps: 46, stepsRiddenToTheEnd: 1, seconds: 80, secondsWithPower: 80)
        var dropped = ride(3, onDay: 2, easy(100, seconds: 700), test: .ramp)
        dropped.scoredPart = .init(steps: 46, stepsRiddenToTheEnd: 6, seconds: 400, secondsWithPower: 200)
        let history = FTPEstimator().history([first, short, dropped])
        XCTAssertEqual(history.map(\.workoutId), [1])
        XCTAssertEqual(try XCTUnwrap(history.last).watts, 225, accuracy: 0.01)
        XCTAssertEqual(
            FitnessTest.ramp.unscoredReason(short.scoredPart),
            "the ramp ended after 1 of its minutes, before it was hard (a ramp is scored from its 5th minute on)")
        XCTAssertEqual(
            FitnessTest.ramp.unscoredReason(dropped.scoredPart),
            "the power meter sent power in only 50 % of the test's scored part")
        // A 20-minute test stopped at 15 of its 20 minutes.
        XCTAssertEqual(
            FitnessTest.twentyMinute.unscoredReason(
                .init(steps: 1, stepsRiddenToTheEnd: 0, seconds: 900, secondsWithPower: 900)),
            "the ride ended before the end of its 20 minutes (15 min ridden)")
    }

    func testAValueFallsOnlyOnceItsEffortsLeaveTheWindow() throws {
        let synthetic = try RideRecords.watts("synthetic_cp250_w20000")
        var rides = [ride(1, onDay: 0, easy()), ride(2, onDay: 1, synthetic)]
        // Moderate rides: 4 minutes at 300 W and 20 minutes at 220 W, far below the synthetic ride's curve.
        let moderate = easy(seconds: 600) + easy(300, seconds: 240) + easy(seconds: 600) + easy(220, seconds: 1200)
        rides += (3...6).map { ride(Int64($0), onDay: Int64($0) * 10, moderate) }
        let history = FTPEstimator().history(rides)
        // Days 30 and 40 still see the synthetic ride; day 50 does not (its efforts are 49 days old) and falls.
        XCTAssertEqual(history.map(\.workoutId), [2, 5])
        XCTAssertLessThan(history[1].watts, history[0].watts)
        XCTAssertTrue(Set(history[1].efforts.map(\.workoutId)).isSubset(of: [3, 4, 5]))
    }

    func testAManualValueHoldsUntilANewerEstimateIsAccepted() {
        let estimate = FTPEstimate(method: .criticalPower, watts: 260, effectiveMicroseconds: 2 * day, workoutId: 7)
        let older = FTPEstimate(method: .criticalPower, watts: 240, effectiveMicroseconds: day / 2, workoutId: 3)
        var history = FTPHistory(
            estimates: [estimate, older], settings: [.manual(watts: 250, fromMicroseconds: day)])
        XCTAssertEqual(history.inForce(at: day / 2)?.watts, 240)
        XCTAssertEqual(history.inForce(at: day)?.watts, 250)
        XCTAssertEqual(history.inForce(at: 3 * day)?.method, .manual)
        XCTAssertEqual(history.pending(at: 3 * day), estimate)
        history.settings.append(.accept(estimateMicroseconds: 2 * day))
        XCTAssertEqual(history.inForce(at: 3 * day), estimate)
        XCTAssertNil(history.pending(at: 3 * day))
        // Between the manual value and the accepted estimate, the manual value held.
        XCTAssertEqual(history.inForce(at: day + 1)?.watts, 250)
        // A later manual value wins again.
        history.settings.append(.manual(watts: 270, fromMicroseconds: 4 * day))
        XCTAssertEqual(history.inForce(at: 5 * day)?.watts, 270)
        XCTAssertEqual(history.entries.map(\.watts), [240, 250, 260, 270])
        XCTAssertEqual(history.criticalPower(at: 5 * day), nil)
    }

    /// The envelopes of consecutive stretches of rides, appended, are the envelope of all of them, holder for holder:
    /// curves of a few whole watts (ties everywhere), of lengths that differ, without power, and empty, cut at
    /// every place and in three.
    func testEnvelopesOfStretchesAppendToTheEnvelopeOfTheirRides() {
        let curves: [[Double]] = [
            [5, 4, 4, 2], [5, 5, 3], [], [0, 0, 0, 0, 0, 0], [6, 4, 4, 2, 2], [5, 4, 4, 3], [6], [0, 0],
            [6, 4, 4, 3, 2, 1, 1],
        ]
        let rides = curves.enumerated().map { index, watts in
            RideCurve(
                workoutId: Int64(100 + index), startMicroseconds: start + Int64(index) * day,
                endMicroseconds: start + Int64(index) * day + 1, fitnessTest: nil, curve: PowerCurve(watts: watts))
        }
        let whole = CurveEnvelope(rides)
        XCTAssertEqual(whole.rideCount, 9)
        XCTAssertEqual(whole.poweredRideCount, 6)
        XCTAssertEqual(whole.curve.watts, [6, 5, 4, 3, 2, 1, 1])
        // The first ride to reach each best: 104 (6 W), 101 (5 W), 100 (4 W), 105 (3 W), 104 (2 W), then the
        // longest.
        XCTAssertEqual((1...7).map { whole.holder(seconds: $0)?.workoutId }, [104, 101, 100, 105, 104, 108, 108])
        XCTAssertNil(whole.holder(seconds: 8))
        for cut in 0...rides.count {
            for second in cut...rides.count {
                var appended = CurveEnvelope(Array(rides[..<cut]))
                appended.append(CurveEnvelope(Array(rides[cut..<second])))
                appended.append(CurveEnvelope(Array(rides[second...])))
                XCTAssertEqual(appended, whole, "cut at \(cut) and \(second)")
            }
        }
        XCTAssertEqual(whole.cut(toSeconds: 2).curve.watts, [6, 5])
        XCTAssertEqual(whole.cut(toSeconds: 2).holder(seconds: 2)?.workoutId, 101)
        // A kept envelope whose parts disagree is refused.
        XCTAssertNil(
            CurveEnvelope(
                rideCount: 1, poweredRideCount: 1, curve: PowerCurve(watts: [5, 4]), holders: whole.holders,
                sources: [0]))
        XCTAssertNil(
            CurveEnvelope(
                rideCount: 1, poweredRideCount: 1, curve: PowerCurve(watts: [5]), holders: [], sources: [0]))
    }
}

/// An FTP never exceeds the best 20 minutes of its window, and rides that overlap in time count once.
final class FTPEvidenceTests: XCTestCase {
    let day: Int64 = 86_400 * 1_000_000
    let start: Int64 = 1_569_000_000 * 1_000_000

    func testNoEstimateExceedsTheWindowsBest20Minutes() throws {
        // A real ride (1 Hz records) stored twice on two days: two "rides" that agree perfectly with each other.
        // The envelope fit then puts CP above anything held for 20 minutes, which an hour's power cannot be.
        let watts = try RideRecords.watts("sweatpy_4078723797")
        let curve = WorkoutStatistics.powerCurve(
            watts.enumerated().map { SecondSample(second: $0.offset, powerWatts: $0.element) })
        let best20 = try XCTUnwrap(curve.watts(seconds: 1200))
        // The oracle's 20-minute power of this ride (Fixtures/rides/references.json).
        XCTAssertEqual(best20, 306.815, accuracy: 0.01)
        let rides = (0..<2).map { index in
            RideCurve(
                workoutId: Int64(index + 1), startMicroseconds: start + Int64(index) * day,
                endMicroseconds: start + Int64(index) * day + Int64(watts.count) * 1_000_000, fitnessTest: nil,
                curve: curve)
        }
        for estimate in FTPEstimator().history(rides) {
            XCTAssertLessThanOrEqual(estimate.watts, best20, "\(estimate)")
        }
        XCTAssertNil(FTPEstimator().estimate(rides, at: rides[1].endMicroseconds))
    }

    func testOverlappingRidesFormGroupsThatCountOnce() {
        let minute: Int64 = 60_000_000
        func ride(_ id: Int64, _ from: Int64, _ to: Int64, chosen: Int64? = nil) -> RideOverlaps.Ride {
            RideOverlaps.Ride(
                id: id, startMicroseconds: from * minute, endMicroseconds: to * minute, chosenMicroseconds: chosen)
        }
        let overlaps = RideOverlaps([
            ride(5, 0, 60), ride(2, 30, 90),  // overlapping: one group
            ride(3, 90, 120),  // starts when 2 ends: touching is not overlapping
            ride(7, 200, 300), ride(8, 290, 400), ride(9, 390, 410),  // a chain: one group, nothing shared by all
            ride(10, 500, 500), ride(11, 499, 501),  // no duration: overlaps nothing
        ])
        XCTAssertEqual(overlaps.groups.map { $0.rides.map(\.id) }, [[5, 2], [7, 8, 9]])
        // Without a choice, the ride stored first (lowest id) counts.
        XCTAssertEqual(overlaps.groups.map(\.counted), [2, 7])
        XCTAssertEqual(overlaps.setAside, [5, 8, 9])
        XCTAssertEqual(overlaps.countedInstead(of: 5), 2)
        XCTAssertNil(overlaps.countedInstead(of: 2))
        XCTAssertNil(overlaps.countedInstead(of: 3))
        XCTAssertEqual(overlaps.groups[0].commonSeconds, 30 * 60)
        XCTAssertEqual(overlaps.groups[1].commonSeconds, 0)

        // The rider's latest choice wins.
        let chosen = RideOverlaps([ride(1, 0, 60, chosen: 100), ride(2, 10, 70, chosen: 200), ride(3, 20, 80)])
        XCTAssertEqual(chosen.groups.map(\.counted), [2])
        XCTAssertEqual(chosen.setAside, [1, 3])
    }
}
