import BlueZ
import CyclingSensors
import Foundation
import RecorderInterface
import Testing
import WorkoutStore
import Workouts

@testable import LiveRecording

/// The live recorder's rules, each as a scenario against a scripted BlueZ (`FakeSensorBus`), a clock the test moves
/// (`ManualClock`) and an in-memory database: reconnecting with backoff, a silent sensor, bluetoothd leaving,
/// rides that start and end on their own, armed and refused starts, a goal that ends the ride, SIGTERM. No real
/// time passes: each scenario takes milliseconds. (The end-to-end ride against the Python stand-in, over a real
/// bus, is `LiveRecorderTests`.)
@Suite struct RecorderScenarioTests {
    static let address = "C0:11:22:33:44:55"
    static let trainerAddress = "F1:22:33:44:55:66"

    /// A recorder with one power meter, running.
    struct Rig {
        let clock = ManualClock()
        let bus: FakeSensorBus
        let store: WorkoutStore
        let recorder: LiveRecorder
        let meter: String
        /// The trainer's device path, when the rig has one.
        let trainer: String
        let running: Task<WorkoutSummary?, any Error>

        /// A rig with a power meter and, when `trainer` lists what it takes, a smart trainer that answers its
        /// control point as `answers` says (Success for the op codes not listed; nil: silent).
        init(
            _ change: (inout LiveRecorder.Options) -> Void = { _ in }, meterPresent: Bool = true,
            trainer targets: [FitnessMachineFeature.TargetSetting]? = nil,
            answers: [UInt8: ControlPointResult]? = [:]
        ) async throws {
            bus = FakeSensorBus(clock: clock)
            meter = meterPresent ? await bus.addPowerMeter(address, name: "Stages Power L") : ""
            store = try WorkoutStore()
            var options = LiveRecorder.Options()
            options.sensors = [address]
            if let targets {
                trainer = await bus.addTrainer(trainerAddress, targets: targets)
                await bus.setTrainerAnswers(answers)
                options.sensors.append(trainerAddress)
            } else {
                trainer = ""
            }
            change(&options)
            let recorder = LiveRecorder(bluez: bus, store: store, options: options, clock: clock)
            self.recorder = recorder
            running = Task { try await recorder.run() }
            // The recorder is at work once its flush timer waits on the clock.
            try await settled()
        }

        /// Waits until the recorder has done everything the clock's time and the bus's events asked of it: its
        /// timer waits again, every sensor job and trainer write it queued is carried out, every event sent is
        /// handled.
        func settled() async throws {
            let (clock, bus, recorder) = (clock, bus, recorder)
            try await eventually("the recorder at rest at \(clock.elapsed)") {
                guard clock.sleeperCount == 1, await bus.isDrained, await recorder.isIdle else { return false }
                // A job may have sent an event as it finished.
                return await bus.isDrained
            }
        }

        /// Moves the clock on in half-second steps (the flush interval), each one finished before the next: every
        /// `pedalEvery` seconds (0: never) the meter sends `watts`.
        func ride(seconds: Double, watts: Int16 = 200, pedalEvery: Double = 1) async throws {
            let steps = Int((seconds * 2).rounded())
            for step in 1...max(steps, 1) {
                clock.advance(by: .milliseconds(500))
                try await settled()
                let time = Double(step) / 2
                if pedalEvery > 0, time.truncatingRemainder(dividingBy: pedalEvery) == 0 {
                    await bus.notifyPower(meter, watts: watts)
                    try await settled()
                }
            }
        }

        func state() async -> RecorderState { await recorder.status().state }
        func meterState() async -> LiveStatus.SensorState? { await recorder.status().sensors.first?.state }

        func streaming() async throws {
            try await eventually("the meter streaming") { await meterState() == .streaming }
        }

        /// Stops the recorder as SIGTERM does and returns what it saved.
        func stop() async throws -> WorkoutSummary? {
            await recorder.stop()
            return try await running.value
        }
    }

    /// SIGTERM right after `record --wait` is on the bus, while it still looks for its adapter: it ends at once,
    /// having opened nothing, instead of waiting for rides it was told to stop taking.
    @Test func aStopBeforeTheRecorderRunsEndsItAtOnce() async throws {
        let clock = ManualClock()
        let bus = FakeSensorBus(clock: clock)
        _ = await bus.addPowerMeter(Self.address, name: "Stages Power L")
        let store = try WorkoutStore()
        var options = LiveRecorder.Options()
        options.sensors = [Self.address]
        options.waitForStart = true
        let recorder = LiveRecorder(bluez: bus, store: store, options: options, clock: clock)
        await recorder.stop()
        let outcome = Outcome()
        let running = Task {
            let summary = try await recorder.run()
            await outcome.end()
            return summary
        }
        try await eventually("the recorder to end") { await outcome.ended }
        #expect(try await running.value == nil)
        #expect(try store.list().isEmpty)
    }

    @Test func aLostLinkIsConnectedAgainWithBackoffAndTheJournalKeepsTheGap() async throws {
        let rig = try await Rig()
        try await rig.streaming()
        try await rig.ride(seconds: 4)
        await rig.bus.drop(rig.meter)
        try await eventually("the link lost") { await rig.meterState() == .reconnecting }
        // The next two attempts are refused: 1 s after the drop, then 1 s, then 2 s after each failure.
        await rig.bus.setRefusals(2)
        let dropped = rig.clock.elapsed
        try await rig.ride(seconds: 6)
        try await rig.streaming()
        let attempts = await rig.bus.calls("connect").map(\.at)
        #expect(attempts.count == 4, "\(attempts)")
        if attempts.count == 4 {
            #expect(attempts[1] - dropped >= .seconds(1) && attempts[1] - dropped <= .seconds(1.5))
            #expect(attempts[2] - attempts[1] == .seconds(1))
            #expect(attempts[3] - attempts[2] == .seconds(2))
        }
        try await rig.ride(seconds: 2)
        let summary = try #require(try await rig.stop())
        let kinds = try rig.store.journal(summary.id).compactMap { event -> String? in
            switch event.kind {
            case .connected: "connected"
            case .disconnected: "disconnected"
            default: nil
            }
        }
        #expect(kinds == ["connected", "disconnected", "connected"])
    }

    @Test func aSilentSensorIsSubscribedAgainThenConnectedAgain() async throws {
        let rig = try await Rig()
        try await rig.streaming()
        try await rig.ride(seconds: 6)
        let before = await rig.bus.calls.count
        let lastHeard = rig.clock.elapsed
        // Silent while connected (notifications once a second): stale after five intervals, subscribed again;
        // still silent five intervals later, disconnected and connected again after the 1-s backoff.
        try await rig.ride(seconds: 14, pedalEvery: 0)
        let after = await rig.bus.calls.dropFirst(before)
        let meter = rig.meter
        #expect(
            after.map(\.what) == [
                "stopNotify \(meter)", "startNotify \(meter)", "disconnect \(meter)", "connect \(meter)",
                "read 2a65", "startNotify \(meter)",
            ])
        let times = after.map(\.at)
        if times.count >= 4 {
            #expect(times[0] - lastHeard > .seconds(5) && times[0] - lastHeard <= .seconds(5.5), "\(times)")
            #expect(times[2] - times[0] > .seconds(5) && times[2] - times[0] <= .seconds(5.5), "\(times)")
            #expect(times[3] - times[2] == .seconds(1), "\(times)")
        }
        #expect(await rig.meterState() == .streaming)
        _ = try await rig.stop()
    }

    @Test func bluetoothdLeavingAndReturningKeepsTheRide() async throws {
        let rig = try await Rig()
        try await rig.streaming()
        try await rig.ride(seconds: 3)
        let workout = await rig.recorder.workoutId
        await rig.bus.bluetoothdLeaves()
        try await eventually("the meter searching") { await rig.meterState() == .searching }
        #expect(await rig.recorder.status().screen.message == "bluetoothd left the bus: waiting for it to come back")
        try await rig.ride(seconds: 2, pedalEvery: 0)
        await rig.bus.bluetoothdReturns()
        try await rig.ride(seconds: 1, pedalEvery: 0)
        try await rig.streaming()
        try await rig.ride(seconds: 3)
        #expect(await rig.recorder.workoutId == workout)
        #expect(await rig.state() == .running)
        let summary = try #require(try await rig.stop())
        #expect(summary.id == workout)
    }

    @Test func anAutoRideStartsWithPedallingAndEndsAfterTheIdleTime() async throws {
        let rig = try await Rig { $0.auto = LiveRecorder.AutoRide(endAfterSeconds: 10) }
        try await rig.streaming()
        try await rig.ride(seconds: 5, watts: 0)
        #expect(await rig.state() == .waiting)
        #expect(await rig.recorder.workoutId == 0)
        var waited = 0.0
        while await rig.state() != .running, waited < 20 {
            try await rig.ride(seconds: 1)
            waited += 1
        }
        #expect(await rig.state() == .running, "pedalling for 20 s did not start a ride")
        let workout = await rig.recorder.workoutId
        try await rig.ride(seconds: 5)
        // No pedalling: the ride ends and is saved after 10 s of it; the recorder waits for the next one.
        try await rig.ride(seconds: 16, watts: 0)
        #expect(await rig.state() == .waiting)
        let listed = try rig.store.list()
        #expect(listed.map(\.id) == [workout])
        #expect(listed.first?.status == .complete)
        #expect(try await rig.stop() == nil)
    }

    @Test func anArmedStartBeginsAtTheFirstPedalStroke() async throws {
        let rig = try await Rig { $0.waitForStart = true }
        try await rig.streaming()
        #expect(try await rig.recorder.start(StartRequest(plan: WorkoutPlan(name: "Armed"), when: .pedalling)) == 0)
        #expect(await rig.state() == .armed)
        try await rig.ride(seconds: 4, watts: 0)
        #expect(await rig.state() == .armed)
        var waited = 0.0
        while await rig.state() != .running, waited < 20 {
            try await rig.ride(seconds: 1)
            waited += 1
        }
        #expect(await rig.state() == .running)
        #expect(await rig.recorder.status().name == "Armed")
        _ = try await rig.stop()
    }

    @Test func aRideEndsItselfAtItsGoal() async throws {
        let rig = try await Rig { $0.waitForStart = true }
        try await rig.streaming()
        let id = try await rig.recorder.start(
            StartRequest(plan: WorkoutPlan(goal: .timeSeconds(5)), endAtGoal: true))
        #expect(id > 0)
        try await rig.ride(seconds: 8)
        #expect(await rig.state() == .waiting, "the ride went on past its goal")
        let listed = try rig.store.list()
        #expect(listed.map(\.id) == [id])
        #expect(listed.first?.status == .complete)
        _ = try await rig.stop()
    }

    @Test func aStartWithoutAConnectedSensorIsRefusedInWords() async throws {
        let rig = try await Rig({ $0.waitForStart = true }, meterPresent: false)
        try await rig.ride(seconds: 2, pedalEvery: 0)
        do {
            _ = try await rig.recorder.start(StartRequest())
            Issue.record("a start without sensors was taken")
        } catch .noSensors(let message) {
            #expect(message.contains("no sensor is connected"), "\(message)")
            #expect(message.contains("cyclelog sensors add"), "\(message)")
        } catch {
            Issue.record("refused for another reason: \(error)")
        }
        #expect(await rig.state() == .waiting)
        #expect(try await rig.stop() == nil)
    }

    @Test func aStartWaitsForASensorThatIsConnecting() async throws {
        // The meter's link dropped and its first reconnection fails: it is connecting when the start comes (the
        // phone's Start, `cyclelog start`), which waits for it rather than asking the rider to wake it.
        let rig = try await Rig { $0.waitForStart = true }
        try await rig.streaming()
        await rig.bus.setRefusals(1)
        await rig.bus.drop(rig.meter)
        try await eventually("the meter reconnecting") { await rig.meterState() == .reconnecting }
        let start = Task { () async throws(LiveRecorder.StartRefusal) -> Int64 in
            await rig.recorder.waitForASensor()
            return try await rig.recorder.start(StartRequest())
        }
        // The clock runs on through the reconnection's back-off, its refusal and its success (well within the
        // 10 s a start waits).
        var halfSeconds = 0
        while await rig.meterState()?.isConnected != true, halfSeconds < 16 {
            rig.clock.advance(by: .milliseconds(500))
            halfSeconds += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await start.value > 0)
        #expect(await rig.state() == .running)
        _ = try await rig.stop()
    }

    @Test func sigtermMidRideSavesItAndReleasesTheSensors() async throws {
        let rig = try await Rig()
        try await rig.streaming()
        try await rig.ride(seconds: 6)
        let summary = try #require(try await rig.stop())
        #expect(summary.statistics.elapsedSeconds >= 5)
        let listed = try rig.store.list()
        #expect(listed.first?.status == .complete)
        // Nothing left subscribed or connected.
        #expect(await rig.bus.calls("stopNotify").count == 1)
        #expect(await rig.bus.calls("disconnect").count == 1)
        #expect(await !rig.bus.isNotifying(rig.meter))
    }
}

extension FakeSensorBus {
    func setRefusals(_ count: Int) { refusals = count }
}

/// Whether a task has ended, for a scenario that must not wait forever on one that would not.
private actor Outcome {
    private(set) var ended = false
    func end() { ended = true }
}
