import CyclingSensors
import StructuredWorkouts
import XCTest

@testable import Workouts

/// An undo in a ride's events gives the ride that the events without the action give: laps, events, the seconds
/// and their moving time, the trainer's targets and the workout's compliance (Docs/reference/journal.md, undo).
final class UndoTests: XCTestCase {
    let meter = "C0:11:22:33:44:55"

    func us(_ seconds: Double) -> Int64 { Int64((seconds * 1_000_000).rounded()) }

    func event(_ kind: RideEvent.Kind, at seconds: Double) -> RideEvent {
        RideEvent(timeMicroseconds: us(seconds), kind)
    }

    /// Power from the meter twice a second, changing every second, until `seconds`.
    func pedalling(until seconds: Double) -> [RideEvent] {
        stride(from: 0.0, to: seconds, by: 0.5).map { time in
            let watts = Int16(100 + Int(time) % 7 * 20)
            return event(
                .notification(
                    sensor: meter, characteristic: 0x2A63,
                    value: CyclingPowerMeasurement(instantaneousPower: watts).encoded()), at: time)
        }
    }

    /// A ride of three minutes with every kind of action a rider can undo.
    func ride() throws -> (events: [RideEvent], actions: [RideEvent]) {
        let workout = try WorkoutText.parse(
            """
            # cyclelog workout 1
            name Three steps
            step warmup 60s 150W
            step active 60s 250W scored
            step cooldown 60s 120W
            """)
        let actions = [
            event(.setting(.trainerTarget(.erg(watts: 200))), at: 5.1),
            event(.control(.lap), at: 30.2),
            event(.control(.marker("bottle")), at: 40.3),
            event(.control(.intake(Intake(.water, amount: 250, unit: "ml")!)), at: 45.4),
            event(.control(.pause), at: 50.5),
            event(.control(.resume), at: 70.6),
            event(.setting(.trainerTarget(.erg(watts: 300))), at: 80.1),
            event(.setting(.player(.skip)), at: 90.2),
            event(.setting(.player(.back)), at: 95.3),
            event(.setting(.player(.skip)), at: 97.4),
            event(.setting(.player(.extend(seconds: 30))), at: 100.3),
            event(.setting(.player(.intensity(percent: 90))), at: 110.4),
        ]
        let opening = [
            event(.control(.start(WorkoutPlan(name: "Undo"))), at: 0),
            event(.setting(.workout(PlannedWorkout(workout, ftpWatts: 250))), at: 0),
        ]
        let events = opening + sorted(pedalling(until: 180) + actions) + [event(.control(.end), at: 180)]
        return (events, actions)
    }

    func sorted(_ events: [RideEvent]) -> [RideEvent] {
        events.enumerated().sorted {
            ($0.element.timeMicroseconds, $0.offset) < ($1.element.timeMicroseconds, $1.offset)
        }.map(\.element)
    }

    func undo(_ action: RideEvent, at seconds: Double) -> RideEvent {
        event(.control(.undo(action.undoable!)), at: seconds)
    }

    func build(_ events: [RideEvent]) throws -> Workout {
        var builder = UndoableBuilder(WorkoutBuilder())
        for event in events { _ = builder.add(event) }
        return try XCTUnwrap(builder.finish())
    }

    func assertSameRide(_ a: Workout, _ b: Workout, _ message: String, line: UInt = #line) {
        XCTAssertEqual(a.state, b.state, message, line: line)
        XCTAssertEqual(a.endMicroseconds, b.endMicroseconds, message, line: line)
        XCTAssertEqual(a.samples, b.samples, message, line: line)
        XCTAssertEqual(a.lapStarts, b.lapStarts, message, line: line)
        XCTAssertEqual(a.events, b.events, message, line: line)
        XCTAssertEqual(a.statistics, b.statistics, message, line: line)
        XCTAssertEqual(a.laps.map(\.statistics), b.laps.map(\.statistics), message, line: line)
        XCTAssertEqual(
            a.trainerTargets.map { "\($0.timeMicroseconds) \($0.target)" },
            b.trainerTargets.map { "\($0.timeMicroseconds) \($0.target)" }, message, line: line)
        XCTAssertEqual(a.planCompliance, b.planCompliance, message, line: line)
        XCTAssertEqual(a.problemCount, b.problemCount, message, line: line)
    }

    /// Each action undone 20 s later, with the ride's other actions before and after it: the same ride as the
    /// events without it.
    func testEachUndoGivesTheRideWithoutTheAction() throws {
        let (events, actions) = try ride()
        for action in actions {
            let undone = try build(sorted(events + [undo(action, at: Double(action.timeMicroseconds) / 1e6 + 20)]))
            let without = try build(events.filter { $0 != action })
            assertSameRide(undone, without, "\(action.kind)")
        }
    }

    /// What the undos change, worked out by hand: a pause undone leaves the resume refused and no time paused; a
    /// lap undone leaves one lap; the water undone leaves none.
    func testWhatAnUndoneActionLeaves() throws {
        let (events, actions) = try ride()
        let all = try build(events)
        XCTAssertEqual(all.statistics.movingSeconds, 180 - 20.1, accuracy: 1e-6)
        XCTAssertEqual(
            all.lapStarts.map { Double($0) / 1e6 }, [30.2, 80, 90, 95, 97],
            "the pressed lap at its time, then a lap at the second each step begins in: the second step after 60 s"
                + " of riding and the 20.1 s paused, the third by the skip, the second again by the back and the"
                + " third by the skip after it")
        let pause = actions[4], lap = actions[1], water = actions[3]
        let unpaused = try build(sorted(events + [undo(pause, at: 60)]))
        XCTAssertEqual(unpaused.statistics.movingSeconds, 180, accuracy: 1e-6)
        XCTAssertEqual(unpaused.problemCount, 1, "the resume has no pause to end")
        XCTAssertTrue(unpaused.samples.allSatisfy(\.isRunning))
        let noLap = try build(sorted(events + [undo(lap, at: 31)]))
        XCTAssertFalse(noLap.lapStarts.contains(us(30.2)))
        XCTAssertTrue(all.lapStarts.contains(us(30.2)))
        let dry = try build(sorted(events + [undo(water, at: 46)]))
        XCTAssertNil(dry.events.waterMillilitres)
        XCTAssertEqual(all.events.waterMillilitres, 250)
    }

    /// An End undone: the ride goes on as the same ride to its next End.
    func testAnUndoneEndGoesOnAsTheSameRide() throws {
        let start = event(.control(.start(WorkoutPlan())), at: 0)
        let end = event(.control(.end), at: 60)
        let later = [undo(end, at: 70), event(.control(.end), at: 120)]
        let undone = try build([start] + sorted(pedalling(until: 120) + [end] + later))
        let without = try build([start] + sorted(pedalling(until: 120) + [later[1]]))
        assertSameRide(undone, without, "end")
        XCTAssertEqual(undone.statistics.elapsedSeconds, 120)
        XCTAssertEqual(undone.samples.count, 120)
    }

    /// An undo that names nothing (a second undo of the same action, a time with no such action, an action older
    /// than the minute a builder keeps) is a problem, and the ride is as it was.
    func testAnUndoThatNamesNothingIsAProblem() throws {
        let (events, actions) = try ride()
        let lap = actions[1]
        let once = try build(sorted(events + [undo(lap, at: 31)]))
        let twice = try build(sorted(events + [undo(lap, at: 31), undo(lap, at: 32)]))
        XCTAssertEqual(twice.lapStarts, once.lapStarts)
        XCTAssertEqual(twice.problemCount, once.problemCount + 1)
        let nothing = event(.control(.undo(UndoneAction(timeMicroseconds: us(30.3), verb: "lap"))), at: 33)
        XCTAssertEqual(try build(sorted(events + [nothing])).lapStarts, try build(events).lapStarts)
        let tooLate = try build(sorted(events + [undo(lap, at: 30.2 + 61)]))
        XCTAssertEqual(tooLate.lapStarts, try build(events).lapStarts)
        XCTAssertEqual(tooLate.problemCount, try build(events).problemCount + 1)
    }
}
