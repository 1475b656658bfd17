import Testing
import Workouts

@testable import LiveRecording

/// The ride rules on their own: no bus, no database, no clock but the times each test passes. The expected values
/// are the rules as `Docs/guide/recording.md` and `Docs/reference/dbus.md` state them.
@Suite struct RideControllerTests {
    static let meter = "C0:11:22:33:44:55"
    static let second: Int64 = 1_000_000
    static let t0: Int64 = 1_700_000_000 * second

    /// A power meter's measurement (flags 0, instantaneous power) at `time`.
    static func power(_ watts: UInt8, at time: Int64) -> RideEvent {
        RideEvent(
            timeMicroseconds: time, .notification(sensor: meter, characteristic: 0x2A63, value: [0, 0, watts, 0]))
    }

    static let described = [RideEvent(timeMicroseconds: t0, .connected(sensor: meter, name: "Stages Power L"))]

    /// What the actions ask for, in words a failure message can show.
    static func names(_ actions: [RideController.Action]) -> [String] {
        actions.map {
            switch $0 {
            case .open: "open"
            case .applied(let applied): "applied \(String(describing: applied.control).prefix { $0 != "(" })"
            case .save: "save"
            case .delete(let id): "delete \(id)"
            case .tell(let notice): "tell \(notice)"
            case .show(let line): "show \(line ?? "nothing")"
            case .rideSaved: "rideSaved"
            case .publishStatus: "status"
            case .done: "done"
            }
        }
    }

    static func waiting(auto: Bool = false) -> RideController {
        var rules = RideController.Rules()
        rules.waitForStart = !auto
        rules.auto = auto ? LiveRecorder.AutoRide(endAfterSeconds: 60) : nil
        var controller = RideController(rules: rules)
        _ = controller.begin(at: t0, descriptions: described)
        return controller
    }

    /// A recorder that waits, with a ride opened at `t0` as workout 7.
    static func riding(_ request: StartRequest = StartRequest()) -> RideController {
        var controller = waiting()
        _ = controller.start(request, at: t0, descriptions: described)
        _ = controller.opened(workoutId: 7, syncIdentifier: "id", descriptions: described)
        return controller
    }

    @Test func aPlainRecorderOpensItsOneRideAtOnceAndEndsWithIt() {
        var controller = RideController(rules: RideController.Rules())
        #expect(Self.names(controller.begin(at: Self.t0, descriptions: [])) == ["open"])
        #expect(
            Self.names(controller.opened(workoutId: 3, syncIdentifier: "id", descriptions: [])).contains("open")
                == false)
        #expect(controller.workoutId == 3)
        let refusal = controller.startRefusal(
            StartRequest(), at: Self.t0, anySensorConnected: true, sensorStates: "")
        guard case .refused(let why) = refusal else {
            Issue.record("a plain recorder took a start")
            return
        }
        #expect(why.contains("record --wait"))
        let ended = (try? controller.control(.end, at: Self.t0 + Self.second).get()) ?? []
        #expect(Self.names(ended).last == "save")
        #expect(Self.names(controller.saved(nil, problem: nil, at: Self.t0, descriptions: [])) == ["status", "done"])
        #expect(controller.isOver)
    }

    @Test func theJournalOpensWithTheStartTheOptionsTheSensorsThenWhatCameWhileTheRowWasOpened() {
        var rules = RideController.Rules()
        rules.waitForStart = true
        rules.wheelCircumferenceMillimetres = 2096
        var controller = RideController(rules: rules)
        _ = controller.begin(at: Self.t0, descriptions: [])
        var plan = WorkoutPlan()
        plan.name = "Tempo"
        #expect(Self.names(controller.start(StartRequest(plan: plan), at: Self.t0, descriptions: [])) == ["open"])
        // The row is being opened: a notification and a control meanwhile.
        #expect(controller.record(Self.power(180, at: Self.t0 + 200_000)).isEmpty)
        guard case .failure(let refused) = controller.control(.lap, at: Self.t0 + 300_000) else {
            Issue.record("a lap was taken before the ride was open")
            return
        }
        #expect(refused.reason.contains("starting"))
        let actions = controller.opened(workoutId: 9, syncIdentifier: "f0e1", descriptions: Self.described)
        #expect(Self.names(actions) == ["applied start", "tell recording workout 9", "status"])
        let written = controller.takeBatch()?.events ?? []
        let journal = written.map(\.kind)
        plan.syncIdentifier = "f0e1"
        #expect(
            journal == [
                .control(.start(plan)), .setting(.defaultWheelCircumference(millimetres: 2096)),
                .connected(sensor: Self.meter, name: "Stages Power L"), Self.power(180, at: 0).kind,
            ])
        // The sensors are described at the ride's start time; what came meanwhile keeps its own.
        #expect(written.map(\.timeMicroseconds) == [Self.t0, Self.t0, Self.t0, Self.t0 + 200_000])
    }

    @Test func startsAreRefusedWhileRidingAndWithoutASensorButArmedWithout() {
        var controller = Self.riding()
        let busy = controller.startRefusal(
            StartRequest(), at: Self.t0 + 95 * Self.second, anySensorConnected: true, sensorStates: "")
        guard case .refused(let why) = busy else {
            Issue.record("a second start was taken during a ride")
            return
        }
        #expect(why.contains("workout 7") && why.contains("1:35") && why.contains("cyclelog end"))

        controller = Self.waiting()
        let none = controller.startRefusal(
            StartRequest(), at: Self.t0, anySensorConnected: false, sensorStates: "Stages Power L searching")
        guard case .noSensors(let words) = none else {
            Issue.record("a start without a connected sensor was taken")
            return
        }
        #expect(words.contains("Stages Power L searching"))
        // A sensor still being connected is named as such, not as one to wake.
        let connecting = controller.startRefusal(
            StartRequest(), at: Self.t0, anySensorConnected: false, sensorStates: "KICKR connecting",
            connecting: ["KICKR"])
        guard case .noSensors(let said) = connecting else {
            Issue.record("a start without a connected sensor was taken")
            return
        }
        #expect(said.hasPrefix("no sensor is connected yet: KICKR is still connecting (waited 10 s)"), "\(said)")
        #expect(!said.contains("wake them"))
        let armed = StartRequest(when: .pedalling)
        #expect(controller.startRefusal(armed, at: Self.t0, anySensorConnected: false, sensorStates: "") == nil)
        #expect(
            Self.names(controller.start(armed, at: Self.t0, descriptions: Self.described)).first?.hasPrefix(
                "tell armed") == true)
        #expect(controller.status(at: Self.t0, sensors: []).state == .armed)
    }

    @Test func anArmedStartOpensAtTheFirstPedalStrokeWithTheSecondsBefore() {
        var controller = Self.waiting()
        _ = controller.start(StartRequest(when: .pedalling), at: Self.t0, descriptions: Self.described)
        var opened: [RideController.Action] = []
        var time = Self.t0
        // Zero watts for five seconds, then pedalling: the ride opens once a second with power is complete.
        for watts: UInt8 in [0, 0, 0, 0, 0, 150, 150, 150] where opened.isEmpty {
            time += Self.second
            opened = controller.record(Self.power(watts, at: time))
        }
        guard case .open(_, let start) = opened.first else {
            Issue.record("pedalling did not open the ride: \(Self.names(opened))")
            return
        }
        // The three seconds of lookback before the second that showed pedalling.
        #expect(start >= time - 3 * Self.second && start < time)
        let actions = controller.opened(workoutId: 4, syncIdentifier: "id", descriptions: Self.described)
        #expect(Self.names(actions).contains("tell pedalling: recording workout 4"))
        #expect(controller.status(at: time, sensors: []).state == .running)
    }

    @Test func aCancelWhileArmedDisarmsAndOtherControlsAreRefusedInWords() {
        var controller = Self.waiting()
        guard case .failure(let refused) = controller.control(.pause, at: Self.t0) else {
            Issue.record("a pause was taken with no ride")
            return
        }
        #expect(refused.reason.contains("cyclelog start"))
        _ = controller.start(StartRequest(when: .pedalling), at: Self.t0, descriptions: [])
        #expect(
            Self.names((try? controller.control(.cancel, at: Self.t0).get()) ?? []).first
                == "tell the armed start was cancelled")
        #expect(controller.status(at: Self.t0, sensors: []).state == .waiting)
    }

    @Test func controlsFollowTheSessionAndEndAndCancelHandTheRideToTheStore() {
        var controller = Self.riding()
        #expect(
            Self.names((try? controller.control(.pause, at: Self.t0 + Self.second).get()) ?? []) == [
                "applied pause", "status",
            ])
        guard case .failure = controller.control(.pause, at: Self.t0 + 2 * Self.second) else {
            Issue.record("a paused ride was paused again")
            return
        }
        var ended = controller
        #expect(
            Self.names((try? ended.control(.end, at: Self.t0 + 3 * Self.second).get()) ?? []) == [
                "applied end", "save",
            ])
        #expect(
            Self.names((try? controller.control(.cancel, at: Self.t0 + 3 * Self.second).get()) ?? []) == [
                "applied cancel", "delete 7",
            ])
        // Back to waiting for the next ride: a recorder that waits takes another start.
        let after = controller.saved(nil, problem: nil, at: Self.t0 + 4 * Self.second, descriptions: [])
        #expect(Self.names(after) == ["status"])
        #expect(controller.status(at: Self.t0, sensors: []).can.start)
    }

    @Test func aStopWhileTheRowIsBeingOpenedDeletesTheRowOnceItExists() {
        var controller = Self.waiting()
        _ = controller.start(StartRequest(), at: Self.t0, descriptions: [])
        #expect(controller.stop(at: Self.t0).isEmpty)
        #expect(
            Self.names(controller.opened(workoutId: 5, syncIdentifier: "id", descriptions: [])) == [
                "delete 5", "status", "done",
            ])
        #expect(controller.isOver)
    }

    /// SIGTERM can come while the recorder still looks for its adapter, after its control is on the bus: the
    /// recorder then begins nothing, waits for no ride and opens none.
    @Test(arguments: [false, true])
    func aStopBeforeTheBeginningLeavesNothingToBegin(waits: Bool) {
        var rules = RideController.Rules()
        rules.waitForStart = waits
        var controller = RideController(rules: rules)
        #expect(Self.names(controller.stop(at: Self.t0)) == ["status", "done"])
        #expect(controller.begin(at: Self.t0, descriptions: Self.described).isEmpty)
        #expect(controller.isOver)
        #expect(controller.startRefusal(StartRequest(), at: Self.t0, anySensorConnected: true, sensorStates: "") != nil)
    }

    @Test func aRowThatCannotBeOpenedByPedallingIsTriedAgainAtTheNextStroke() {
        var controller = Self.waiting(auto: true)
        var time = Self.t0
        func pedal() -> [RideController.Action] {
            var actions: [RideController.Action] = []
            for _ in 0..<4 where actions.isEmpty {
                time += Self.second
                actions = controller.record(Self.power(150, at: time))
            }
            return actions
        }
        #expect(Self.names(pedal()) == ["open"])
        let shown = Self.names(controller.openFailed("disk I/O error", at: time, descriptions: Self.described))
        #expect(shown.contains { $0.hasPrefix("show") && $0.contains("disk I/O error") }, "\(shown)")
        #expect(controller.status(at: time, sensors: []).state == .waiting)
        #expect(Self.names(pedal()) == ["open"])
    }

    @Test func anAutoRideEndsAfterItsIdleTimeAndAGoalRideAtItsGoal() {
        var controller = Self.waiting(auto: true)
        var time = Self.t0
        var opened: [RideController.Action] = []
        while opened.isEmpty {
            time += Self.second
            opened = controller.record(Self.power(150, at: time))
        }
        _ = controller.opened(workoutId: 2, syncIdentifier: "id", descriptions: [])
        _ = controller.takeBatch()
        #expect(controller.dueEndings(at: time + 30 * Self.second).isEmpty)
        let idle = controller.dueEndings(at: time + 62 * Self.second)
        #expect(Self.names(idle) == ["tell no pedalling for 60 s: saving workout 2", "applied end", "save"])

        var plan = WorkoutPlan()
        plan.goal = .timeSeconds(60)
        var goal = Self.riding(StartRequest(plan: plan, endAtGoal: true))
        #expect(goal.dueEndings(at: Self.t0 + 59 * Self.second).isEmpty)
        #expect(
            Self.names(goal.dueEndings(at: Self.t0 + 60 * Self.second)).first
                == "tell goal reached: saving workout 7")
    }

    /// An auto ride ended by its idle time is sealed when the save takes its last batch; the rider pedalling again
    /// before the database has answered begins the next ride, which opens with those first strokes once it has.
    @Test func strokesWhileAnAutoRideIsSavedBeginTheNextRideOnceTheSaveHasAnswered() {
        var controller = Self.waiting(auto: true)
        var time = Self.t0
        while controller.record(Self.power(150, at: time)).isEmpty { time += Self.second }
        _ = controller.opened(workoutId: 2, syncIdentifier: "id", descriptions: [])
        let end = time + 62 * Self.second
        #expect(Self.names(controller.dueEndings(at: end)).last == "save")
        let (last, finished) = controller.seal(at: end, descriptions: Self.described)
        #expect(last?.events.last.map { $0.kind == .control(.end) } == true)
        #expect(finished != nil)
        // The database is slow to answer; the rider pedals again meanwhile.
        let strokes = (1...8).map { Self.power(200, at: end + $0 * Self.second) }
        let meanwhile = strokes.flatMap { controller.record($0) }
        #expect(meanwhile.isEmpty, "no ride opens before the save has answered")
        #expect(controller.takeBatch() == nil, "the saved ride takes nothing more")
        let saved = controller.saved(nil, problem: nil, at: end + 9 * Self.second, descriptions: Self.described)
        #expect(Self.names(saved) == ["open", "status"])
        guard case .open(_, let start) = saved.first else { return }
        #expect(start == strokes[0].timeMicroseconds, "the next ride begins at its first stroke")
        _ = controller.opened(workoutId: 3, syncIdentifier: "id3", descriptions: [])
        let journal = controller.takeBatch()?.events ?? []
        #expect(journal.filter { if case .notification = $0.kind { true } else { false } } == strokes)
    }

    @Test func aLowBatteryIsSaidOncePerRide() {
        var controller = Self.riding()
        let low = [(address: Self.meter, name: "Stages Power L", percent: 15)]
        #expect(
            Self.names(controller.batteries(low)) == [
                "show Stages Power L's battery is at 15 %: charge or replace it soon",
                "tell Stages Power L's battery is at 15 %: charge or replace it soon",
            ])
        #expect(controller.batteries(low).isEmpty)
        #expect(controller.batteries([(address: "AA:00:00:00:00:01", name: "Strap", percent: 21)]).isEmpty)
    }

    @Test func aLostBusSavesTheRideAndEndsTheRecorderWithTheReason() {
        var controller = Self.riding()
        #expect(
            Self.names(controller.connectionLost(at: Self.t0 + Self.second)) == [
                "show the connection to the system bus was lost: saving the ride", "applied end", "save",
            ])
        #expect(Self.names(controller.saved(nil, problem: nil, at: Self.t0, descriptions: [])) == ["status", "done"])
        #expect(controller.problem?.description.contains("the ride was saved") == true)
    }
}
