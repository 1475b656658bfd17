import CyclingSensors
import XCTest

@testable import Workouts

/// The builder against values worked out by hand from the rules of Docs/reference/workouts.md.
final class WorkoutBuilderTests: XCTestCase {
    let meter = "C0:11:22:33:44:55"
    let trainer = "F1:00:00:00:00:01"
    let strap = "E8:33:44:55:66:77"

    func us(_ seconds: Double) -> Int64 { Int64((seconds * 1_000_000).rounded()) }

    func power(_ watts: Int16, crank: (UInt16, UInt16)? = nil, at seconds: Double) -> RideEvent {
        var measurement = CyclingPowerMeasurement(instantaneousPower: watts)
        if let crank {
            measurement.crankRevolutionData = CrankRevolutionData(
                cumulativeCrankRevolutions: crank.0, lastCrankEventTime: crank.1)
        }
        return RideEvent(
            timeMicroseconds: us(seconds),
            .notification(sensor: meter, characteristic: 0x2A63, value: measurement.encoded()))
    }

    func control(_ control: WorkoutControl, at seconds: Double) -> RideEvent {
        RideEvent(timeMicroseconds: us(seconds), .control(control))
    }

    func build(_ events: [RideEvent], configuration: WorkoutBuilder.Configuration = .init()) throws -> Workout {
        // Arrival order, as a capture gives them (a stable sort keeps same-time events in writing order).
        let ordered = events.enumerated().sorted {
            ($0.element.timeMicroseconds, $0.offset) < ($1.element.timeMicroseconds, $1.offset)
        }
        var builder = WorkoutBuilder(configuration: configuration)
        for (_, event) in ordered { builder.add(event) }
        return try XCTUnwrap(builder.finish())
    }

    func testASampleHoldsOneSourcePerChannelInPlace() {
        var sources: ChannelSources = [-1, -1, -1, -1]
        XCTAssertEqual(sources.count, Channel.allCases.count)
        sources[Channel.heartRateBPM.rawValue] = 2
        sources[Channel.powerWatts.rawValue] = 0
        XCTAssertEqual(Array(sources), [0, -1, -1, 2])
        XCTAssertEqual(sources, ChannelSources([0, -1, -1, 2]))
        XCTAssertNotEqual(sources, [0, -1, 1, 2])
        // Plain data: no reference to count when a second is copied.
        XCTAssertTrue(_isPOD(SecondSample.self))
    }

    func testEachSecondIsTheTimeWeightedMeanOfTheHeldValues() throws {
        // 100 W held for 0.5 s, then 300 W: the first second averages 200 W; the second is all 300 W.
        let workout = try build([
            control(.start(WorkoutPlan()), at: 0), power(100, at: 0), power(300, at: 0.5), power(300, at: 1.5),
            control(.end, at: 2),
        ])
        XCTAssertEqual(workout.samples.map(\.powerWatts), [200, 300])
        XCTAssertEqual(workout.statistics.workJoules, 500)
        XCTAssertEqual(workout.samples.map { $0.sources[Channel.powerWatts.rawValue] }, [0, 0])
    }

    func testAValueHoldsThreeSecondsThenTheSilenceIsAGap() throws {
        let workout = try build([
            control(.start(WorkoutPlan()), at: 0), power(200, at: 0), power(200, at: 10), control(.end, at: 11),
        ])
        XCTAssertEqual(workout.samples.map(\.powerWatts), [200, 200, 200, nil, nil, nil, nil, nil, nil, nil, 200])
        // The gap is stored as one: from the end of the hold (3 s) to the next notification (10 s).
        XCTAssertEqual(workout.dropouts, [Dropout(sensorIndex: 0, reason: .stale, start: us(3), end: us(10))])
        // Average power counts the seconds that had power; the gap is not riding at 0 W.
        XCTAssertEqual(workout.statistics.averagePowerWatts, 200)
    }

    func testPausesLeaveTheTimerAndThePowerCurve() throws {
        var events = [control(.start(WorkoutPlan()), at: 0)]
        for second in 0..<30 { events.append(power(second < 10 ? 400 : 100, at: Double(second))) }
        events += [control(.pause, at: 10.5), control(.resume, at: 20.5), control(.end, at: 30)]
        let workout = try build(events)
        let statistics = workout.statistics
        XCTAssertEqual(statistics.elapsedSeconds, 30)
        XCTAssertEqual(statistics.movingSeconds, 20, accuracy: 1e-9)
        // The second in which the pause starts is half on the timer: 400 W × 0.5 s… then 100 W.
        XCTAssertEqual(workout.samples[10].runningFraction, 0.5, accuracy: 1e-9)
        // Work: 10 s × 400 W + (0.5 s of the 11th second, which holds 100 W from t = 10) + 9.5 s × 100 W.
        XCTAssertEqual(try XCTUnwrap(statistics.workJoules), 4000 + 50 + 950, accuracy: 1e-6)
        // No 60-s window exists within one running segment, and none spans the pause.
        XCTAssertNil(statistics.powerCurveWatts[60])
        XCTAssertEqual(statistics.powerCurveWatts[5], 400)
        XCTAssertEqual(workout.events.map(\.control.name), ["start", "pause", "resume", "end"])
    }

    func testNormalizedPowerOfAStepMatchesTheClosedForm() throws {
        // 30 s at 0 W then 30 s at 240 W: the 31 full windows hold k = 0…30 seconds of 240 W, mean 8k W.
        // NP = 8 × (Σ k⁴ / 31)^¼ with Σ_{k=0}^{30} k⁴ = 30·31·61·(3·900 + 90 − 1) / 30.
        let watts = Array(repeating: 0.0, count: 30) + Array(repeating: 240.0, count: 30)
        let sumOfFourthPowers: Double = 30.0 * 31.0 * 61.0 * 2789.0 / 30.0
        let expected: Double = 8.0 * pow(sumOfFourthPowers / 31.0, 0.25)
        XCTAssertEqual(try XCTUnwrap(PowerMetrics.normalizedPower(watts)), expected, accuracy: 1e-9)
        XCTAssertEqual(PowerMetrics.normalizedPower(Array(repeating: 200, count: 60)), 200)
        XCTAssertNil(PowerMetrics.normalizedPower(Array(repeating: 200, count: 29)))
    }

    func testCadenceAveragesLeaveOutZerosButPowerAveragesKeepThem() throws {
        // 60 rpm for 4 s (one revolution per 1024 ticks), then the cranks stop and power drops to 0 W.
        var events = [control(.start(WorkoutPlan()), at: 0)]
        for second in 0...4 {
            events.append(power(200, crank: (UInt16(second), UInt16(second * 1024)), at: Double(second)))
        }
        for second in 5...9 { events.append(power(0, crank: (4, 4096), at: Double(second))) }
        events.append(control(.end, at: 10))
        let workout = try build(events)
        let cadence = workout.samples.map { $0.cadenceRPM.map { Int($0.rounded()) } }
        // No cadence before the second measurement (baseline), 60 while pedalling, 0 once the cap falls.
        XCTAssertEqual(cadence[0], nil)
        XCTAssertEqual(Array(cadence[1...4]), [60, 60, 60, 60])
        XCTAssertEqual(cadence[9], 0)
        XCTAssertEqual(workout.statistics.averageCadenceRPM ?? 0, 60, accuracy: 1e-9)
        XCTAssertEqual(workout.statistics.averagePowerWatts ?? 0, 100, accuracy: 1e-9)
    }

    func testAReconnectNeverComputesARateAcrossTheGap() throws {
        var events = [control(.start(WorkoutPlan()), at: 0)]
        for second in 0...3 {
            events.append(power(200, crank: (UInt16(second), UInt16(second * 1024)), at: Double(second)))
        }
        events.append(RideEvent(timeMicroseconds: us(3.5), .disconnected(sensor: meter)))
        events.append(RideEvent(timeMicroseconds: us(8), .connected(sensor: meter, name: nil)))
        // After reconnecting, the counters have moved on by 40 000 revolutions (a reset or another session).
        for second in 8...11 {
            events.append(power(210, crank: (UInt16(40_000 + second), UInt16(second * 1024)), at: Double(second)))
        }
        events.append(control(.end, at: 12))
        let workout = try build(events)
        XCTAssertEqual(workout.dropouts, [Dropout(sensorIndex: 0, reason: .disconnected, start: us(3.5), end: us(8))])
        XCTAssertLessThanOrEqual(workout.statistics.maximumCadenceRPM ?? 0, 60.000001)
        XCTAssertEqual(workout.samples[8].cadenceRPM, nil, "the first sample after a reconnect is only a baseline")
        XCTAssertEqual(workout.samples[10].cadenceRPM ?? 0, 60, accuracy: 1e-9)
        XCTAssertEqual(workout.samples[5].powerWatts, nil)
    }

    func testAPowerMeterIsPreferredToATrainerAndTheSourceIsKept() throws {
        var bike = IndoorBikeData()
        bike.instantaneousSpeed = 3000
        bike.instantaneousPower = 180
        let trainerValue = bike.encoded()
        var events = [control(.start(WorkoutPlan()), at: 0)]
        for second in 0..<3 {
            events.append(
                RideEvent(
                    timeMicroseconds: us(Double(second)),
                    .notification(sensor: trainer, characteristic: 0x2AD2, value: trainerValue)))
            events.append(power(200, at: Double(second) + 0.01))
        }
        events.append(control(.end, at: 3))
        let workout = try build(events)
        // Second 0: the meter covers 0.99 s and wins. Speed only comes from the trainer: 30.00 km/h.
        XCTAssertEqual(workout.samples.map(\.powerWatts), [200, 200, 200])
        XCTAssertEqual(workout.samples.map { $0.sources[Channel.powerWatts.rawValue] }, [1, 1, 1])
        XCTAssertEqual(workout.samples[1].speedMetersPerSecond ?? 0, 30 / 3.6, accuracy: 1e-9)
        XCTAssertEqual(workout.samples[1].sources[Channel.speedMetersPerSecond.rawValue], 0)
    }

    func testASensorWithTwoWheelSourcesCountsTheDistanceOnce() throws {
        // One device that offers Cycling Power with wheel data (1/2048-s clock) and Cycling Speed and Cadence
        // (1/1024 s), both counting the same wheel: 2 revolutions per second of a 2105-mm wheel = 4.21 m/s.
        var events = [control(.start(WorkoutPlan()), at: 0)]
        for second in 0...10 {
            var measurement = CyclingPowerMeasurement(instantaneousPower: 200)
            measurement.wheelRevolutionData = WheelRevolutionData(
                cumulativeWheelRevolutions: UInt32(2 * second), lastWheelEventTime: UInt16(second * 2048))
            events.append(
                RideEvent(
                    timeMicroseconds: us(Double(second)),
                    .notification(sensor: meter, characteristic: 0x2A63, value: measurement.encoded())))
            let csc = CSCMeasurement(
                wheelRevolutionData: WheelRevolutionData(
                    cumulativeWheelRevolutions: UInt32(2 * second), lastWheelEventTime: UInt16(second * 1024)))
            events.append(
                RideEvent(
                    timeMicroseconds: us(Double(second) + 0.2),
                    .notification(sensor: meter, characteristic: 0x2A5B, value: csc.encoded())))
        }
        events.append(control(.end, at: 11))
        let workout = try build(events)
        XCTAssertEqual(workout.samples[5].speedMetersPerSecond ?? 0, 4.21, accuracy: 1e-9)
        // 20 revolutions were counted from the first notification to the last: 42.1 m, not twice that.
        XCTAssertEqual(workout.statistics.distanceMeters, 20 * 2.105, accuracy: 1e-9)
    }

    func testTheDefaultWheelSettingAppliesToSensorsWithoutTheirOwn() throws {
        // Two wheel sensors at 2 revolutions a second; `wheel * 2000` (a replay's --wheel-circumference) sets
        // every wheel but the one the journal gave its own 2300 mm: 4.0 m/s and 4.6 m/s.
        let other = "C0:11:22:33:44:66"
        var events = [
            control(.start(WorkoutPlan()), at: 0),
            RideEvent(timeMicroseconds: 0, .wheelCircumference(sensor: other, millimetres: 2300)),
            RideEvent(timeMicroseconds: 0, .setting(.defaultWheelCircumference(millimetres: 2000))),
        ]
        for second in 0...10 {
            for sensor in [meter, other] {
                let csc = CSCMeasurement(
                    wheelRevolutionData: WheelRevolutionData(
                        cumulativeWheelRevolutions: UInt32(2 * second), lastWheelEventTime: UInt16(second * 1024)))
                events.append(
                    RideEvent(
                        timeMicroseconds: us(Double(second)),
                        .notification(sensor: sensor, characteristic: 0x2A5B, value: csc.encoded())))
            }
        }
        events.append(control(.end, at: 11))
        let workout = try build(events)
        XCTAssertEqual(workout.sensors.map(\.wheelCircumferenceMillimetres), [2300, 2000])
        var meterOnly = try build(events.filter { $0.sensor != other })
        XCTAssertEqual(meterOnly.samples[5].speedMetersPerSecond ?? 0, 4.0, accuracy: 1e-9)
        meterOnly = try build(events.filter { $0.sensor != meter })
        XCTAssertEqual(meterOnly.samples[5].speedMetersPerSecond ?? 0, 4.6, accuracy: 1e-9)
        // The auto-pause setting is the configuration's from then on.
        var builder = WorkoutBuilder()
        builder.add(RideEvent(timeMicroseconds: 0, .setting(.autoPause(AutoPause(afterSeconds: 9)))))
        XCTAssertEqual(builder.configuration.autoPause, AutoPause(afterSeconds: 9))
    }

    func testMalformedValuesAreReportedAndTheRestIsUsed() throws {
        let events = [
            control(.start(WorkoutPlan()), at: 0), power(150, at: 0),
            RideEvent(
                timeMicroseconds: us(0.5),
                .notification(sensor: meter, characteristic: 0x2A63, value: [0x20, 0x00, 0x96])),
            power(150, at: 1), control(.end, at: 2),
        ]
        var builder = WorkoutBuilder()
        for event in events { builder.add(event) }
        let workout = try XCTUnwrap(builder.finish())
        XCTAssertEqual(workout.samples.map(\.powerWatts), [150, 150])
        XCTAssertEqual(builder.problems.count, 1)
        XCTAssertTrue(builder.problems[0].message.contains("instantaneousPower"), builder.problems[0].message)
    }

    func testSessionRefusesControlsThatDoNotApply() {
        var session = Session()
        XCTAssertNotNil(session.apply(.pause, at: 0))
        XCTAssertNil(session.apply(.start(WorkoutPlan(name: "Ride")), at: 0))
        XCTAssertNotNil(session.apply(.resume, at: 1))
        XCTAssertNil(session.apply(.pause, at: 2))
        XCTAssertNotNil(session.apply(.pause, at: 3))
        XCTAssertNil(session.apply(.lap, at: 4))
        XCTAssertNil(session.apply(.end, at: 5))
        XCTAssertEqual(session.state, .ended)
        XCTAssertNotNil(session.apply(.cancel, at: 6))
        // The open pause ends with the workout.
        XCTAssertEqual(session.pausedMicroseconds(from: 0, to: 10), 3)
    }

    func testAutoPauseTakesStandingStillOffTheTimer() throws {
        var events = [control(.start(WorkoutPlan()), at: 0)]
        for second in 0..<20 { events.append(power(second >= 5 && second < 12 ? 0 : 150, at: Double(second))) }
        events.append(control(.end, at: 20))
        let manual = try build(events)
        let automatic = try build(events, configuration: .init(autoPause: AutoPause()))
        XCTAssertEqual(manual.statistics.movingSeconds, 20)
        // Seconds 5…11 are still (0 W, no speed, no cadence): 7 s ≥ 5 s, off the timer.
        XCTAssertEqual(automatic.statistics.movingSeconds, 13)
        XCTAssertEqual(
            automatic.events.compactMap { if case .marker(let text) = $0.control { text } else { nil } },
            ["autoPause", "autoResume"])
    }

    func testLapsGetTheirOwnStatistics() throws {
        var events = [control(.start(WorkoutPlan()), at: 0)]
        for second in 0..<20 { events.append(power(second < 10 ? 100 : 300, at: Double(second))) }
        events += [control(.lap, at: 10), control(.end, at: 20)]
        let laps = try build(events).laps
        XCTAssertEqual(laps.map(\.number), [1, 2])
        XCTAssertEqual(laps.map(\.statistics.averagePowerWatts), [100, 300])
        XCTAssertEqual(laps.map(\.statistics.movingSeconds), [10, 10])
    }
}
