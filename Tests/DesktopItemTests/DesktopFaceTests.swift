import DBus
import RecorderInterface
import Testing
import Workouts

@testable import DesktopItem

/// The desktop item's rules as plain calls: what it shows, what it notifies and when, what its menu asks, and what
/// a type not granted hides.
@Suite struct DesktopFaceTests {
    /// A ride being recorded: 245.4 W, 142 bpm, 1:02:05 in, lap 1, every control but resume and start open.
    static func riding(workoutId: Int64 = 7) -> RecorderStatus {
        var status = RecorderStatus()
        status.state = .running
        status.workoutId = workoutId
        status.elapsedSeconds = 3725
        status.powerWatts = 245.4
        status.heartRateBPM = 142
        status.cadenceRPM = 88.6
        status.distanceMeters = 31_250
        status.lap = 1
        status.can.pause = true
        status.can.lap = true
        status.can.end = true
        status.can.cancel = true
        status.controlSequence = UInt64(workoutId) << 32 | 1
        status.suggestedWorkouts = WorkoutPreset.builtIn.map(RecorderStatus.SuggestedWorkout.init)
        return status
    }

    static func waiting() -> RecorderStatus {
        var status = RecorderStatus()
        status.state = .waiting
        status.can.start = true
        status.suggestedWorkouts = WorkoutPreset.builtIn.map(RecorderStatus.SuggestedWorkout.init)
        return status
    }

    static func summaries(_ effects: [DesktopFace.Effect]) -> [String] {
        effects.compactMap { if case .notify(let notification) = $0 { notification.summary } else { nil } }
    }

    @Test func theTitleCarriesPowerAndTimeAndHeartRateOnlyWhenGranted() {
        var plain = DesktopFace(types: DataType.control)
        _ = plain.apply(.appeared(Self.riding()))
        #expect(plain.title == "245 W · 1:02:05")
        let tooltip = plain.tooltip
        #expect(tooltip.body.contains("power 245 W"))
        #expect(tooltip.body.contains("cadence 89 rpm"))
        #expect(tooltip.body.contains("31.3 km"))
        #expect(!tooltip.body.contains("heart") && !tooltip.body.contains("bpm"))

        var granted = DesktopFace(types: DataType.control.union([.hr]))
        _ = granted.apply(.appeared(Self.riding()))
        #expect(granted.title == "245 W · 142 bpm · 1:02:05")
        #expect(granted.tooltip.body.contains("heart rate 142 bpm"))

        // Only heart rate granted: no power either, a dash for a reading not known.
        var heartOnly = DesktopFace(types: [.hr, .ride])
        var noHeartRate = Self.riding()
        noHeartRate.heartRateBPM = nil
        _ = heartOnly.apply(.appeared(noHeartRate))
        #expect(heartOnly.title == "— bpm · 1:02:05")
    }

    @Test func withoutARecorderOrARideTheTitleSaysSo() {
        var face = DesktopFace(types: DataType.control)
        #expect(face.title == "cyclelog: no recorder running")
        #expect(face.icon == .noRecorder)
        _ = face.apply(.appeared(Self.waiting()))
        #expect(face.title == "cyclelog: waiting for a ride")
        #expect(face.icon == .waiting)
        var paused = Self.riding()
        paused.state = .paused
        _ = face.apply(.changed(paused.values))
        #expect(face.title == "245 W · 1:02:05 paused")
        #expect(face.icon == .paused)
    }

    @Test func eachChangeOfTheRideIsNotifiedOnceInOrder() {
        var face = DesktopFace(types: DataType.control)
        #expect(face.apply(.appeared(Self.waiting())).isEmpty)

        var status = Self.riding()
        let started = face.apply(.changed(status.values))
        #expect(Self.summaries(started) == ["Ride started"])
        if case .notify(let notification)? = started.first {
            #expect(notification.body == "Ride 7")
            #expect(notification.actions.map(\.key) == ["pause", "lap", "end"])
            #expect(notification.actions.map(\.command) == [.control(.pause), .control(.lap), .control(.end)])
        }
        // The same status again says nothing.
        #expect(face.apply(.changed(status.values)).isEmpty)

        status.lap = 2
        #expect(Self.summaries(face.apply(.changed(status.values))) == ["Lap 2"])

        status.workoutPlanName = "Threshold 3×10"
        status.stepIndex = 1
        status.stepCount = 6
        status.stepName = "Threshold"
        status.targetPowerWatts = 250
        let step = face.apply(.changed(status.values))
        #expect(Self.summaries(step) == ["Threshold 3×10"])
        if case .notify(let notification)? = step.first {
            #expect(notification.body == "Step 2 of 6: Threshold — 250 W")
        }

        status.trainerMessage = "the trainer refused control: another app holds it"
        let refused = face.apply(.changed(status.values))
        #expect(Self.summaries(refused) == ["The trainer refused"])
        if case .notify(let notification)? = refused.first {
            #expect(notification.urgent)
            #expect(notification.actions.first?.command == .steer(.mode("free")))
            #expect(notification.actions.map(\.key) == ["free", "pause", "lap", "end"])
        }

        status.state = .paused
        status.can.pause = false
        status.can.resume = true
        let paused = face.apply(.changed(status.values))
        #expect(Self.summaries(paused) == ["Ride paused"])
        if case .notify(let notification)? = paused.first {
            #expect(notification.actions.map(\.key) == ["resume", "lap", "end"])
        }
        status.state = .running
        #expect(Self.summaries(face.apply(.changed(status.values))) == ["Riding again"])

        let ended = face.apply(
            .event(["kind": .string("end"), "workoutId": .int64(7), "controlSequence": .uint64(7 << 32 | 9)]))
        #expect(Self.summaries(ended) == ["Ride ended"])
        #expect(ended.last == .readSaved(workoutId: 7))
        // It waits 30 s to be undone: the notification says so and offers Undo; an undone End is not read.
        if case .notify(let notification)? = ended.first {
            #expect(notification.body == "Ride 7 is saved in 30 s.")
            #expect(notification.actions == [.init(key: "undo", label: "Undo", command: .undo(action: nil))])
        }
        let undone = face.apply(
            .event(["kind": .string("undo"), "action": .string("end"), "workoutId": .int64(7)]))
        #expect(Self.summaries(undone) == ["Riding again"])
        #expect(undone.last == .forgetSaved)
        // The other events are shown by the properties they change.
        #expect(face.apply(.event(["kind": .string("lap"), "workoutId": .int64(7)])).isEmpty)
    }

    @Test func anItemStartedDuringARideTakesItAsItFindsIt() {
        var face = DesktopFace(types: DataType.control)
        #expect(face.apply(.appeared(Self.riding())).isEmpty)
        var status = Self.riding()
        status.lap = 2
        #expect(Self.summaries(face.apply(.changed(status.values))) == ["Lap 2"])
    }

    @Test func aRecorderThatGoesMidRideIsNotifiedAndOneThatComesBackIsFollowed() {
        var face = DesktopFace(types: DataType.control)
        _ = face.apply(.appeared(Self.riding()))
        let gone = face.apply(.gone)
        #expect(Self.summaries(gone) == ["The recorder stopped"])
        #expect(face.status == nil)
        #expect(face.title == "cyclelog: no recorder running")
        #expect(face.apply(.appeared(Self.waiting())).isEmpty)
        #expect(face.title == "cyclelog: waiting for a ride")
        // Gone while waiting: nothing to say.
        #expect(face.apply(.gone).isEmpty)
        // Changes with no recorder known are not taken.
        #expect(face.apply(.changed(Self.riding().values)).isEmpty)
    }

    @Test func theMenuOffersWhatTheRecorderWouldTake() {
        var face = DesktopFace(types: DataType.control)
        #expect(face.menu.map(\.label) == ["No recorder running"])
        _ = face.apply(.appeared(Self.waiting()))
        let menu = face.menu
        #expect(menu.map(\.label) == ["Start", "Pause", "Lap", "End", "Undo"])
        #expect(menu.map(\.enabled) == [true, false, false, false, false])
        let starts = menu[0].children
        #expect(starts.map(\.label) == WorkoutPreset.builtIn.map(\.title) + ["Open ride"])
        #expect(starts.first?.command == .start(style: ["preset": .text(WorkoutPreset.builtIn[0].id)]))
        #expect(starts.last?.command == .start(style: [:]))

        var paused = Self.riding()
        paused.state = .paused
        paused.can.pause = false
        paused.can.resume = true
        _ = face.apply(.changed(paused.values))
        #expect(face.menu[1] == DesktopFace.MenuEntry(label: "Resume", enabled: true, command: .control(.resume)))
        #expect(face.menu[0].enabled == false)

        // The action the recorder offers to undo, named and by its number; a trainer's only with trainer granted.
        paused.undoId = 3
        paused.undoAction = "pause"
        paused.undoType = "ride"
        _ = face.apply(.changed(paused.values))
        #expect(face.menu[4] == DesktopFace.MenuEntry(label: "Undo pause", enabled: true, command: .undo(action: 3)))
        paused.undoAction = "ERG 300 W"
        paused.undoType = "trainer"
        _ = face.apply(.changed(paused.values))
        #expect(face.menu[4].label == "Undo ERG 300 W")
        var rideOnly = DesktopFace(types: DataType.read.union([.ride]))
        _ = rideOnly.apply(.appeared(paused))
        #expect(rideOnly.menu[4] == DesktopFace.MenuEntry(label: "Undo", enabled: false))
    }

    @Test func withoutRideControlTheMenuAndTheNotificationsHaveNoControls() {
        var face = DesktopFace(types: DataType.read)
        _ = face.apply(.appeared(Self.waiting()))
        #expect(face.menu == [DesktopFace.MenuEntry(label: "Controls not granted (--types control)", enabled: false)])
        let started = face.apply(.changed(Self.riding().values))
        if case .notify(let notification)? = started.first { #expect(notification.actions.isEmpty) }
        // A trainer's refusal is said to every screen, without a way to let it go.
        var refused = Self.riding()
        refused.trainerMessage = "the trainer refused control"
        let said = face.apply(.changed(refused.values))
        #expect(Self.summaries(said) == ["The trainer refused"])
        if case .notify(let notification)? = said.first { #expect(notification.actions.isEmpty) }
    }

    @Test func aSavedRideIsSaidWithWhatIsGrantedAndTheFTPItChanged() {
        let ride = SavedRide(
            workoutId: 7, name: "Tuesday intervals", movingSeconds: 3725, distanceMeters: 31_250,
            averagePowerWatts: 212.4, workJoules: 791_000, averageHeartRateBPM: 151.2,
            ftp: .init(watts: 262, previousWatts: 250, pending: false))
        let plain = DesktopFace(types: DataType.control).saved(ride)
        #expect(plain.summary == "Ride 7 saved: Tuesday intervals")
        #expect(plain.body == "1:02:05 · 31.3 km · 212 W average · 791 kJ\nFTP now 262 W (was 250 W)")
        let granted = DesktopFace(types: DataType.control.union([.hr])).saved(ride)
        #expect(granted.body.hasPrefix("1:02:05 · 31.3 km · 212 W average · 791 kJ · 151 bpm average\n"))
        var pending = ride
        pending.ftp = .init(watts: 262, previousWatts: nil, pending: true)
        #expect(
            DesktopFace(types: DataType.control).saved(pending).body.hasSuffix(
                "\nNew FTP 262 W waits for you: `cyclelog ftp accept`"))
        // Without power granted, no power and no FTP; without speed, no distance.
        let heartOnly = DesktopFace(types: [.hr]).saved(ride)
        #expect(heartOnly.body == "1:02:05 · 151 bpm average")
    }
}

/// The two objects on the session bus as values: the item's properties and icons, and the menu's dbusmenu layout.
@Suite struct StatusItemTests {
    @Test func theIconIsARGB32InNetworkOrderOneDiscPerState() {
        let pixels = StatusItem.disc(size: 22, icon: .recording)
        #expect(pixels.count == 22 * 22 * 4)
        let centre = (11 * 22 + 11) * 4
        #expect(Array(pixels[centre..<centre + 4]) == [255, 0xD9, 0x30, 0x25])
        #expect(pixels[0] == 0, "a corner is transparent")
        // With no recorder the disc is a ring: its centre is empty.
        #expect(StatusItem.disc(size: 22, icon: .noRecorder)[centre] == 0)
        guard case .array("(iiay)", let sizes) = StatusItem.pixmaps(.paused) else {
            Issue.record("IconPixmap is a(iiay)")
            return
        }
        #expect(sizes.count == 2)
    }

    @Test func theItemsPropertiesFollowTheFaceAndSayWhatChanged() {
        var face = DesktopFace(types: DataType.control)
        let before = StatusItem.itemProperties(face)
        #expect(before["Title"] == .string("cyclelog: no recorder running"))
        #expect(before["ItemIsMenu"] == .boolean(true))
        #expect(before["Menu"] == .objectPath("/MenuBar"))
        _ = face.apply(.appeared(DesktopFaceTests.riding()))
        let after = StatusItem.itemProperties(face)
        #expect(
            StatusItem.itemSignals(from: before, to: after).compactMap(\.member) == [
                "NewTitle", "NewIcon", "NewToolTip",
            ])
        #expect(StatusItem.itemSignals(from: after, to: after).isEmpty)
        guard case .structure(let tooltip)? = after["ToolTip"] else {
            Issue.record("ToolTip is (sa(iiay)ss)")
            return
        }
        #expect(tooltip.count == 4)
        #expect(tooltip[2] == .string("245 W · 1:02:05"))
    }

    @Test func theMenuLayoutNumbersItsItemsAndNestsTheWorkouts() throws {
        var face = DesktopFace(types: DataType.control)
        _ = face.apply(.appeared(DesktopFaceTests.waiting()))
        let layout = StatusItem.MenuLayout(face.menu)
        // Start, then its workouts and Open ride, then the four entries after it.
        let afterStarts = Int32(WorkoutPreset.builtIn.count) + 2
        #expect(layout.items.map(\.id) == [1] + (1...4).map { afterStarts + $0 })
        #expect(layout.items[0].children.map(\.id) == Array(2...Int32(WorkoutPreset.builtIn.count + 2)))
        #expect(layout.item(2)?.entry.label == WorkoutPreset.builtIn[0].title)
        #expect(layout.item(99) == nil)

        let root = try #require(layout.item(0))
        guard case .structure(let fields) = StatusItem.MenuLayout.layout(root, depth: -1, names: []),
            case .array("v", let children) = fields[2]
        else {
            Issue.record("the layout is (ia{sv}av)")
            return
        }
        #expect(fields[0] == .int32(0))
        #expect(fields[1].dictionary?["children-display"]?.string == "submenu")
        #expect(children.count == 5)
        // Depth 0: the item alone.
        guard case .structure(let shallow) = StatusItem.MenuLayout.layout(root, depth: 0, names: []) else { return }
        #expect(shallow[2] == .array(elementSignature: "v", []))
        // A label's own underscore is doubled (one alone marks the mnemonic).
        let entry = StatusItem.MenuLayout.Item(
            id: 5, entry: .init(label: "Sweet_spot", enabled: true), children: [])
        #expect(StatusItem.MenuLayout.properties(entry).dictionary?["label"]?.string == "Sweet__spot")
        #expect(StatusItem.MenuLayout.properties(entry, names: ["enabled"]).dictionary?.keys.sorted() == ["enabled"])
    }
}
