import BlueZ
import CyclingSensors
import StructuredWorkouts
import Testing
import TrainerControl
import Workouts

@testable import LiveRecording

/// The rules that join the ride, the sensors, the trainer and the workout, as plain calls on the `RecorderCore` with
/// the times each test passes: no bus, no database, no task. `CoreRig` answers the effects that ask for an answer
/// as the bus and the store would (a connection succeeds, a ride's row opens as workout 1) and keeps the rest (the
/// trainer's writes, the notices, the controls applied) for the test to read. The expected values are the rules as
/// `Docs/guide/trainer.md` and `Docs/guide/workouts.md` state them and `TrainerRules`' defaults: a big step (over
/// 100 W) ramped over 2 s and no write more than 100 W above what the trainer held 400 ms before; the cadence
/// safety easing ERG to min(half the target, 100 W) after 3 s under 40 rpm and ramping back over 5 s above 60 rpm.
@Suite struct RecorderCoreTests {
    static let meterAddress = "C0:11:22:33:44:55"
    static let trainerAddress = "F1:22:33:44:55:66"

    /// Two steps and a free end: 10 s at 100 W, 60 s at 300 W, 60 s at 200 W.
    static let twoSteps = PlannedWorkout(
        StructuredWorkout(
            name: "Two steps",
            steps: [
                WorkoutStep(.warmup, .seconds(10), .steady(.watts(100))),
                WorkoutStep(.active, .seconds(60), .steady(.watts(300))),
                WorkoutStep(.active, .seconds(60), .steady(.watts(200))),
            ]),
        ftpWatts: nil)

    @Test func aPauseDuringAnErgRampHoldsThePlayerWhileTheRampGoesOnWithinItsSteps() {
        let rig = CoreRig(workout: Self.twoSteps)
        rig.ride(seconds: 10.5)
        #expect(rig.status.stepIndex == 1)
        // The step to 300 W is a big step: ramped from 100 W over 2 s. A pause comes half-way up.
        #expect(rig.status.trainerState == .ramping)
        rig.control(.pause)
        #expect(rig.status.state == .paused)
        rig.ride(seconds: 20)
        // The player holds while paused (it moves by moving time); the trainer reaches the step's target all the same.
        #expect(rig.status.stepIndex == 1)
        #expect(rig.ergWatts.last == 300)
        #expect(rig.risesWithinTheirLimit(), "\(rig.ergWrites)")
        let moving = rig.status.movingSeconds
        rig.control(.resume)
        rig.ride(seconds: 5)
        #expect(abs(rig.status.movingSeconds - (moving + 5)) < 1)
        #expect(rig.status.stepIndex == 1, "15.5 s of the step's 60 ridden")
        #expect(rig.told.contains("step 2 of 3: 1:00 at 300 W"))
        #expect(!rig.told.contains { $0.hasPrefix("step 3") })
    }

    @Test func aSkipDuringTheCadenceSafetysRecoveryWaitsForTheRiderThenRampsToTheNewStep() {
        let rig = CoreRig(workout: Self.twoSteps)
        rig.ride(seconds: 12)
        #expect(rig.ergWatts.last == 300)
        // The rider stops pedalling: after 3 s under 40 rpm ERG eases to min(300 / 2, 100) = 100 W.
        rig.ride(seconds: 4, cadenceRPM: 20)
        #expect(rig.status.trainerState == .recovering)
        #expect(rig.ergWatts.last == 100)
        let written = rig.ergWrites.count
        // Skip to the 200 W step while recovering: the target changes, the trainer stays eased.
        rig.player(.skip)
        #expect(rig.status.stepIndex == 2)
        #expect(rig.status.screen.trainerTargetWatts == 200)
        rig.ride(seconds: 2, cadenceRPM: 20)
        #expect(rig.ergWatts[written...].allSatisfy { $0 <= 100 }, "\(rig.ergWatts)")
        // Pedalling again: back to the new step's 200 W over 5 s, never the old 300 W.
        rig.ride(seconds: 8, cadenceRPM: 90)
        #expect(rig.told.contains("cadence back above 60 rpm: ERG returns to 200 W over 5 s"))
        #expect(rig.ergWatts.last == 200)
        #expect(rig.ergWatts[written...].allSatisfy { $0 <= 200 }, "\(rig.ergWatts)")
        #expect(rig.status.trainerState == .controlled)
    }

    @Test func aTrainerThatReconnectsMidRampIsToldWhereTheRampIsNow() {
        let rig = CoreRig(workout: Self.twoSteps)
        rig.ride(seconds: 10.5)
        #expect(rig.status.trainerState == .ramping)
        rig.dropTrainer()
        let writes = rig.writes.count
        rig.ride(seconds: 0.5, trainerSends: false)
        #expect(rig.writes.count == writes, "nothing written while the trainer is away")
        #expect(rig.status.trainerState == .disconnected)
        // Back 1 s after the drop (the first retry): control asked for, then the target where the ramp stands.
        rig.ride(seconds: 1, trainerSends: false)
        let after = rig.writes[writes...].map(\.opCode)
        #expect(after.first == FitnessMachineControlPoint.OpCode.requestControl, "\(after)")
        #expect(rig.ergWatts.last == 300, "the ramp's 2 s are over by then: its end")
        #expect(rig.journal.contains { if case .disconnected(Self.trainerAddress) = $0 { true } else { false } })
    }

    @Test func aTrainerThatReconnectsMidStepIsToldTheStepsTargetWithoutTheStepAskingAgain() {
        let rig = CoreRig(workout: Self.twoSteps)
        rig.ride(seconds: 20)
        #expect(rig.ergWatts.last == 300)
        let asked = rig.journal.filter { if case .setting(.trainerTarget) = $0 { true } else { false } }.count
        rig.dropTrainer()
        rig.ride(seconds: 3)
        #expect(rig.status.trainerState == .controlled)
        let last = rig.writes.suffix(2).map(\.bytes)
        #expect(last == [[0x00], [0x05, 0x2C, 0x01]], "control, then 300 W")
        let askedAfter = rig.journal.filter { if case .setting(.trainerTarget) = $0 { true } else { false } }.count
        #expect(askedAfter == asked, "the rider's target stands; the step asked nothing new")
        #expect(rig.status.stepIndex == 1)
    }

    @Test func anEndWhileATrainerWriteIsUnansweredResetsTheTrainerBeforeTheRideEnds() {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 2)
        rig.steer(.power(watts: 150))
        #expect(rig.writes.map(\.bytes) == [[0x00], [0x05, 0x96, 0x00]], "control, then 150 W, answered")
        rig.answers = false
        rig.steer(.power(watts: 200))
        #expect(rig.writes.last?.bytes == [0x05, 0xC8, 0x00])
        let effects = rig.control(.end, resume: false)
        // The Reset goes out though 200 W is unanswered, and the end waits for the trainer to be let go.
        #expect(rig.writes.last?.bytes == [0x01])
        #expect(effects.last.map { if case .awaitRelease(.control(.end, _, _)) = $0 { true } else { false } } == true)
        #expect(rig.status.state == .running)
        rig.resumeRelease()
        #expect(rig.status.state == .ended)
        #expect(rig.saves == 1)
        // The journal has the Reset before the End.
        let reset = rig.journal.lastIndex { if case .write(_, _, let value) = $0 { value == [0x01] } else { false } }
        let end = rig.journal.lastIndex { if case .control(.end) = $0 { true } else { false } }
        #expect(reset != nil && end != nil && reset! < end!)
        // A late answer to the 200 W write, or the timeout, sends nothing more.
        let writes = rig.writes.count
        rig.indicate([0x80, 0x05, 0x01])
        rig.advance(seconds: 5)
        _ = rig.tick()
        #expect(rig.writes.count == writes)
    }

    @Test func aStepChangeAndTheRidersTargetInTheSameSecondEndWithTheLastAskOneWriteAtATime() {
        let rig = CoreRig(workout: Self.twoSteps)
        rig.ride(seconds: 9.5)
        rig.answers = false
        // At 10 s the step asks 300 W; in the same second the rider asks 180 W.
        let before = rig.writes.count
        rig.advance(seconds: 0.5)
        _ = rig.tick()
        rig.steer(.power(watts: 180))
        #expect(rig.status.screen.trainerTargetWatts == 180)
        // 300 W is a big step from 100 W, ramped; 180 W is not: it is sent at once, the only write outstanding.
        #expect(rig.writes[before...].map(\.bytes) == [[0x05, 0xB4, 0x00]])
        // Once it is answered, 180 W stands: nothing sends 300 W after it.
        rig.answers = true
        rig.answerPending()
        rig.ride(seconds: 3)
        #expect(rig.ergWatts.last == 180)
        let targets = rig.journal.compactMap { kind -> TrainerTarget? in
            if case .setting(.trainerTarget(let target)) = kind { target } else { nil }
        }
        #expect(targets.suffix(2) == [.erg(watts: 300), .erg(watts: 180)])
    }

    @Test func aStartThatAsksForErgJournalsThatTargetAsTheRideOpens() throws {
        // The ride's trainer statistics are measured against the journal's `trainer` lines: a Start with
        // `control=erg` opens its ride with `trainer erg 150` (the starting target), not the free mode before it.
        let rig = CoreRig(workout: nil, waitForStart: true)
        rig.ride(seconds: 2)
        let request = try StartRequest(style: ["control": .text("erg")], presets: [])
        #expect(rig.core.startRefusal(request, at: rig.time) == nil)
        rig.carryOut(rig.core.start(request, at: rig.time))
        #expect(rig.status.state == .running)
        let targets = rig.journal.compactMap { kind -> TrainerTarget? in
            if case .setting(.trainerTarget(let target)) = kind { target } else { nil }
        }
        #expect(targets == [.erg(watts: 150)])
        #expect(rig.ergWatts == [150])
    }

    @Test func aStartsHubIsWantedFromItsArmingUntilItsRideIsSaved() throws {
        let hub = try StartRequest(style: ["hub": .flag(true)], presets: [])
        let armedHub = try StartRequest(style: ["hub": .flag(true), "when": .text("pedalling")], presets: [])
        // A recorder with no hub refuses it in its own words; one whose hub runs throughout takes it as it is.
        let without = CoreRig(workout: nil, waitForStart: true)
        without.ride(seconds: 2)
        guard case .refused(let words)? = without.core.startRefusal(hub, at: without.time) else {
            Issue.record("hub=true was taken by a recorder without a hub")
            return
        }
        #expect(words == "hub=true: " + LiveRecorder.HubChoice.noHub)
        let always = CoreRig(workout: nil, waitForStart: true, hub: .always)
        always.ride(seconds: 2)
        #expect(always.core.startRefusal(hub, at: always.time) == nil)
        always.carryOut(always.core.start(hub, at: always.time))
        #expect(always.status.state == .running)
        #expect(!always.status.hubWanted, "the hub that runs throughout is nobody's to bring up")

        let rig = CoreRig(workout: nil, waitForStart: true, hub: .onStart)
        rig.ride(seconds: 2)
        #expect(!rig.status.hubWanted)
        #expect(rig.core.startRefusal(armedHub, at: rig.time) == nil)
        rig.carryOut(rig.core.start(armedHub, at: rig.time))
        #expect(rig.status.state == .armed)
        #expect(rig.status.hubWanted, "an app connects before the first pedal stroke")
        rig.ride(seconds: 3)
        #expect(rig.status.state == .running)
        #expect(rig.status.hubWanted)
        rig.control(.end)
        #expect(rig.saves == 1)
        #expect(!rig.status.hubWanted, "withdrawn once the ride is saved")
        // The next ride's Start does not ask for it.
        #expect(rig.startRide() != 0)
        #expect(!rig.status.hubWanted)
    }

    @Test func aSensorLostDuringAGuidedRampTestNeitherEndsItNorStopsItsSteps() {
        let ramp = BuiltInWorkouts.ramp(startWatts: 100, stepWatts: 20)
        let rig = CoreRig(workout: PlannedWorkout(ramp, ftpWatts: nil), rampTest: true)
        // Past the 5-minute warm-up into the scored minutes.
        rig.ride(seconds: 6 * 60 + 10, cadenceRPM: 90)
        let step = rig.status.stepIndex
        #expect(rig.status.targetPowerWatts == 120)
        // The trainer (the cadence's source) drops for 8 s: no cadence is not a rider who stopped.
        rig.dropTrainer()
        rig.ride(seconds: 8, trainerSends: false, refusals: 3)
        #expect(rig.status.state == .running)
        #expect(!rig.told.contains { $0.contains("ramp test is over") })
        rig.ride(seconds: 8, cadenceRPM: 90)
        #expect(rig.status.trainerState == .controlled)
        #expect(rig.status.stepIndex >= step)
        #expect(rig.ergWatts.last == Int16(rig.status.targetPowerWatts ?? 0))
        // The rider stops: 5 s under 50 rpm in a scored step ends the test.
        rig.ride(seconds: 8, cadenceRPM: 20)
        #expect(rig.told.contains("cadence under 50 rpm for 5 s: the ramp test is over"))
        #expect(rig.status.state == .ended)
        #expect(rig.writes.last?.bytes == [0x01], "the trainer let go")
    }

    @Test func thePresetsAreReadEveryThreeSecondsAndAChangeIsPublished() {
        let rig = CoreRig(workout: nil)
        #expect(rig.presetReads == 1, "read as the recorder begins")
        #expect(rig.status.suggestedWorkouts.map(\.id) == WorkoutPreset.builtIn.map(\.id))
        rig.advance(seconds: 2.5)
        #expect(!rig.tick().contains { if case .readPresets = $0 { true } else { false } })
        rig.advance(seconds: 0.5)
        #expect(rig.tick().contains { if case .readPresets = $0 { true } else { false } })
        #expect(rig.presetReads == 2)
        // Another program adds one: the next read publishes the status with it.
        rig.presetsInStore.append(WorkoutPreset(id: "hills", title: "Hills", request: StartRequest()))
        #expect(rig.core.presetsRead(rig.presetsInStore).count == 1)
        #expect(rig.status.suggestedWorkouts.last?.id == "hills")
        #expect(rig.core.presetsRead(rig.presetsInStore).isEmpty, "unchanged: nothing to publish")
    }
}

/// A `RecorderCore` with a power meter and a smart trainer (ERG, resistance and simulation; 0–1500 W), its
/// effects answered at once as the bus and the store would.
final class CoreRig {
    static let t0: Int64 = 1_700_000_000_000_000
    static let adapterPath = "/org/bluez/hci0"

    var core: RecorderCore
    private(set) var elapsed: Duration = .zero
    private var devices: [String: BluetoothDevice] = [:]
    private var characteristics: [String: [GattCharacteristic]] = [:]
    /// How many of the next connection attempts fail.
    var refusals = 0
    /// Whether the trainer answers its control point (Success) as soon as a write is handed over.
    var answers = true
    private var pendingAnswers: [FitnessMachineRequest] = []
    private var deferredRelease: RecorderCore.Deferred?
    private(set) var writes: [FitnessMachineRequest] = []
    /// The ride's journal as it was written, with times.
    private(set) var journalled: [RideEvent] = []
    private(set) var told: [String] = []
    /// What the apps on the sensor hub were told, in order.
    private(set) var toApps: [HubMessage] = []
    private(set) var saves = 0
    /// The presets as the store has them, and how many times they were read.
    var presetsInStore = WorkoutPreset.builtIn
    private(set) var presetReads = 0

    init(
        workout: PlannedWorkout?, rampTest: Bool = false, waitForStart: Bool = false,
        hub: LiveRecorder.HubChoice = .none(LiveRecorder.HubChoice.noHub)
    ) {
        var options = LiveRecorder.Options()
        options.hub = hub
        options.sensors = [RecorderCoreTests.meterAddress, RecorderCoreTests.trainerAddress]
        options.workout = workout.map { LiveRecorder.WorkoutChoice(id: "w", planned: $0) }
        if rampTest { options.plan.fitnessTest = .ramp }
        options.waitForStart = waitForStart
        core = RecorderCore(options: options)
        core.use(adapterPath: Self.adapterPath)
        addDevice(RecorderCoreTests.meterAddress, name: "Stages Power L", service: 0x1818, [(0x2A63, ["notify"])])
        addDevice(
            RecorderCoreTests.trainerAddress, name: "Trainer", service: 0x1826,
            [
                (0x2AD2, ["notify"]), (0x2ACC, ["read"]), (0x2AD8, ["read"]), (0x2AD9, ["write", "indicate"]),
                (0x2ADA, ["notify"]),
            ])
        carryOut(core.begin(at: time))
        _ = tick()
    }

    var time: RecorderCore.Time {
        RecorderCore.Time(
            elapsed: elapsed,
            rideMicroseconds: Self.t0 + elapsed.components.seconds * 1_000_000
                + elapsed.components.attoseconds / 1_000_000_000_000)
    }

    var status: LiveStatus { core.status(at: time) }

    func advance(seconds: Double) { elapsed += .seconds(seconds) }

    func tick() -> [RecorderCore.Effect] {
        let effects = core.tick(devices: Array(devices.values), at: time)
        carryOut(effects)
        return effects
    }

    /// Rides on in half-second ticks; each whole second the meter sends `watts` and (unless `trainerSends` is
    /// false) the trainer its power and `cadenceRPM`. `refusals` connection attempts fail first.
    func ride(
        seconds: Double, watts: Int16 = 200, cadenceRPM: Double = 90, trainerSends: Bool = true, refusals: Int = 0
    ) {
        self.refusals = refusals
        for step in 1...Int((seconds * 2).rounded()) {
            advance(seconds: 0.5)
            _ = tick()
            guard step % 2 == 0 else { continue }
            let power = UInt16(bitPattern: watts)
            notify(RecorderCoreTests.meterAddress, 0x2A63, [0x00, 0x00, UInt8(power & 0xFF), UInt8(power >> 8)])
            if trainerSends {
                let cadence = UInt16(cadenceRPM * 2)
                notify(
                    RecorderCoreTests.trainerAddress, 0x2AD2,
                    [
                        0x44, 0x00, 0xE8, 0x03, UInt8(cadence & 0xFF), UInt8(cadence >> 8), UInt8(power & 0xFF),
                        UInt8(power >> 8),
                    ])
            }
        }
    }

    /// A control; `byRider`: a command, which the rider can undo (and whose End waits for its window unless
    /// `endsAtOnce`).
    @discardableResult
    func control(
        _ control: WorkoutControl, resume: Bool = true, byRider: Bool = false, endsAtOnce: Bool = true
    ) -> [RecorderCore.Effect] {
        guard case .success(let effects) = core.control(control, at: time, byRider: byRider, endsAtOnce: endsAtOnce)
        else { return [] }
        carryOut(effects)
        if resume { resumeRelease() }
        return effects
    }

    func steer(_ ask: TrainerAsk, byRider: Bool = false) {
        if case .success(let effects) = core.steer(ask, at: time, byRider: byRider) { carryOut(effects) }
    }

    /// An app on the sensor hub writes `bytes` to the hub's Fitness Machine control point.
    func appWrites(_ bytes: [UInt8], app: String = "00:AA:02:00:00:06") {
        carryOut(core.appWrote(bytes, by: app, at: time))
    }

    /// That app's link to the hub goes.
    func appLeaves(_ app: String = "00:AA:02:00:00:06") { carryOut(core.appLeft(app, at: time)) }

    func player(_ control: PlayerControl, byRider: Bool = false) {
        if case .success(let effects) = core.player(control, at: time, byRider: byRider) { carryOut(effects) }
    }

    /// A Start now (a recorder that waits for one): the ride's id (the rig's store opens every ride as 1), or 0
    /// when refused.
    func startRide() -> Int64 {
        let request = StartRequest()
        guard core.startRefusal(request, at: time) == nil else { return 0 }
        carryOut(core.start(request, at: time))
        return (try? core.started(request).get()) ?? 0
    }

    /// An undo: what was undone, in words, or why not.
    func undo(_ id: Int64? = nil) -> Result<String, LiveRecorder.CommandRefusal> {
        core.undo(id, at: time).map { outcome in
            carryOut(outcome.effects)
            return outcome.words
        }
    }

    /// The trainer answered its Reset (or the wait for it ran out): what waited for it goes on.
    func resumeRelease() {
        guard let deferred = deferredRelease else { return }
        deferredRelease = nil
        carryOut(core.resume(deferred, at: time))
    }

    func indicate(_ bytes: [UInt8]) { notify(RecorderCoreTests.trainerAddress, 0x2AD9, bytes) }

    /// Success for every write not answered yet, oldest first.
    func answerPending() {
        while !pendingAnswers.isEmpty { indicate([0x80, pendingAnswers.removeFirst().opCode, 0x01]) }
    }

    /// The trainer's link drops (BlueZ says Connected is false).
    func dropTrainer() {
        let path = Self.path(RecorderCoreTests.trainerAddress)
        devices[path]?.connected = false
        pendingAnswers = []
        if let device = devices[path] { carryOut(core.handle(.deviceChanged(device), at: time)) }
    }

    /// Every event of the ride's journal so far (what the flushes wrote, and the rest).
    var journal: [RideEvent.Kind] { journalEvents.map(\.kind) }

    /// The same with their times.
    var journalEvents: [RideEvent] {
        journalled += core.takeBatch()?.events ?? []
        return journalled
    }

    var ergWrites: [FitnessMachineRequest] {
        writes.filter { $0.opCode == FitnessMachineControlPoint.OpCode.setTargetPower }
    }

    var ergWatts: [Int16] {
        ergWrites.map { Int16(bitPattern: UInt16($0.bytes[1]) | UInt16($0.bytes[2]) << 8) }
    }

    /// No ERG write more than `bigStepWatts` above the one before it (the writes here are at least 500 ms apart,
    /// more than `riseSpacing`).
    func risesWithinTheirLimit() -> Bool {
        zip(ergWatts, ergWatts.dropFirst()).allSatisfy { Int($1) - Int($0) <= TrainerRules().bigStepWatts }
    }

    // MARK: Answering the effects

    private func notify(_ address: String, _ uuid: UInt16, _ value: [UInt8]) {
        let path = Self.path(address)
        guard devices[path]?.connected == true,
            let characteristic = characteristics[path]?.first(where: { $0.shortUUID == uuid })
        else { return }
        if let effects = core.notification(characteristic, value, arrivalMicroseconds: 0, at: time) {
            carryOut(effects)
        }
    }

    func carryOut(_ effects: [RecorderCore.Effect]) {
        for effect in effects {
            switch effect {
            case .sensorJob(.connect(let attempt), let wanted): connect(wanted, attempt: attempt)
            case .sensorJob: break
            case .discovery(let on): core.discoveryChanged(on)
            case .subscribeTrainer(let wanted, let controlPoint, _, let capabilities):
                carryOut(core.trainerSubscribed(wanted, controlPoint: controlPoint, capabilities, at: time))
            case .trainerWrite(_, let request):
                writes.append(request)
                if answers {
                    indicate([0x80, request.opCode, 0x01])
                } else {
                    pendingAnswers.append(request)
                }
            case .awaitRelease(let deferred):
                // A Reset answered at once goes on at once; one left unanswered waits for `resumeRelease`.
                if answers, let deferred {
                    carryOut(core.resume(deferred, at: time))
                } else {
                    deferredRelease = deferred
                }
            case .released: break
            case .open(let request, _, let descriptions):
                let ride = RideStore.OpenedRide(workoutId: 1, syncIdentifier: "core-rig", workout: nil)
                carryOut(core.opened(request, .success(ride), descriptions: descriptions, at: time))
            case .flush(let batch):
                journalled += batch?.events ?? []
            case .save:
                saves += 1
                journalled += core.seal(at: time).batch?.events ?? []
                carryOut(core.saved(.success(nil), at: time))
            case .readPresets:
                presetReads += 1
                carryOut(core.presetsRead(presetsInStore))
            case .delete, .sayTestResult, .live, .applied, .publishStatus, .done, .observeSensor,
                .observeCharacteristics:
                break
            case .toApps(let message): toApps.append(message)
            case .announce(.notice(let words)): told.append(words)
            case .announce: break
            }
        }
    }

    private func connect(_ wanted: String, attempt: Int) {
        let path = Self.path(wanted)
        guard refusals == 0 else {
            refusals -= 1
            return carryOut(core.connection(wanted, attempt: attempt, .linkFailed(line: "refused"), at: time).effects)
        }
        devices[path]?.connected = true
        let found = characteristics[path] ?? []
        carryOut(core.connection(wanted, attempt: attempt, .linked(found), at: time).effects)
        var reads: [(characteristic: UInt16, value: [UInt8])] = []
        if wanted == RecorderCoreTests.trainerAddress {
            // ERG, resistance and simulation (target setting bits 3, 2 and 13); power 0–1500 W in 1 W steps.
            let targets = FitnessMachineFeature(targets: [.power, .resistance, .indoorBikeSimulation])
                .targetSettingFeatures
            var feature = [UInt8](repeating: 0, count: 8)
            for index in 0..<4 { feature[4 + index] = UInt8(truncatingIfNeeded: targets >> (8 * index)) }
            feature[1] = 0x40
            reads = [(0x2ACC, feature), (0x2AD8, [0x00, 0x00, 0xDC, 0x05, 0x01, 0x00])]
        }
        let description = SensorConnection.Description(batteryPercent: nil, reads: reads)
        carryOut(core.connection(wanted, attempt: attempt, .described(description), at: time).effects)
        let subscribed = SensorConnection.Step.subscribed(
            measurements: SensorConnection.measurements(among: found), failure: nil, characteristics: found,
            reads: reads)
        carryOut(core.connection(wanted, attempt: attempt, subscribed, at: time).effects)
    }

    private func addDevice(_ address: String, name: String, service: UInt16, _ found: [(UInt16, [String])]) {
        let path = Self.path(address)
        let serviceUUID = String(format: "0000%04x-0000-1000-8000-00805f9b34fb", service)
        devices[path] = BluetoothDevice(
            path: path, adapterPath: Self.adapterPath, address: address, addressType: "random", name: name,
            serviceUUIDs: [serviceUUID])
        characteristics[path] = found.enumerated().map { index, characteristic in
            GattCharacteristic(
                path: path + "/service0001/char\(index)",
                uuid: String(format: "0000%04x-0000-1000-8000-00805f9b34fb", characteristic.0),
                servicePath: path + "/service0001", serviceUUID: serviceUUID, devicePath: path,
                flags: characteristic.1)
        }
    }

    static func path(_ address: String) -> String {
        adapterPath + "/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }
}
