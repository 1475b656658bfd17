import Formats
import RecorderInterface
import TrainerControl
import Workouts

/// What the desktop shows of the recorder, as one pure value: the status item's title, tooltip, icon and menu, and
/// the notification to put up as the ride changes. It is told what the recorder says (`apply`) and what became of
/// a saved ride (`saved`), and answers with the effects to carry out; `DesktopItem` carries them out. A type not
/// granted to the desktop (`types`) is absent, as on a paired screen: without `hr` no heart rate is shown, without
/// `ride` the menu has no controls.
public struct DesktopFace: Sendable {
    /// The types the desktop may read and control (`--types`, `control` by default: no heart rate).
    public let types: Set<DataType>
    /// The recorder's properties; nil while no recorder runs.
    public private(set) var status: RecorderStatus?
    /// The ride the notifications speak of, and what was said of it, so that each change is told once.
    var told = Told()

    struct Told: Sendable, Equatable {
        var workoutId: Int64 = 0
        var state: RecorderState?
        var lap: UInt32 = 0
        var stepIndex: Int64 = -1
        var trainerMessage = ""
    }

    public init(types: Set<DataType>) {
        self.types = types
    }

    /// What the desktop item does after a change.
    public enum Effect: Sendable, Equatable {
        /// Put up `notification`, replacing the one shown.
        case notify(DesktopNotification)
        /// Read ride `workoutId` once it is saved, and tell `saved` what it was.
        case readSaved(workoutId: Int64)
        /// The End was undone: the ride is not being saved after all.
        case forgetSaved
    }

    // MARK: What the recorder says

    /// Takes what the recorder said; the notifications it calls for.
    public mutating func apply(_ update: RecorderUpdate) -> [Effect] {
        switch update {
        case .appeared(let status):
            let wasGone = self.status == nil
            self.status = status
            // A desktop item started during a ride (or a recorder back after a restart) says nothing of what
            // happened before it looked: it takes the ride as it finds it.
            if wasGone {
                told = Told(
                    workoutId: status.workoutId, state: status.state, lap: status.lap, stepIndex: status.stepIndex,
                    trainerMessage: status.trainerMessage)
                return []
            }
            return changes()
        case .changed(let values):
            guard status != nil else { return [] }
            status!.apply(values)
            return changes()
        case .event(let values):
            // A ride's end is told by its event: the `ended` state may last less than one property update (a
            // recorder started with `--wait` waits again at once).
            guard let workoutId = values["workoutId"]?.integer, workoutId != 0 else { return [] }
            switch values["kind"]?.string {
            case "end":
                // An End waits 30 s to be undone (while it waits, it is the only action that can be).
                let undo =
                    types.contains(.ride)
                    ? [DesktopNotification.Action(key: "undo", label: "Undo", command: .undo(action: nil))] : []
                return [
                    .notify(
                        DesktopNotification(
                            summary: "Ride ended", body: "Ride \(workoutId) is saved in 30 s.", actions: undo)),
                    .readSaved(workoutId: workoutId),
                ]
            case "undo" where values["action"]?.string == "end":
                return [
                    .notify(
                        DesktopNotification(
                            summary: "Riding again", body: "The End is undone: ride \(workoutId) goes on.",
                            actions: status.map(rideActions) ?? [])),
                    .forgetSaved,
                ]
            case "cancel":
                return [
                    .notify(
                        DesktopNotification(
                            summary: "Ride cancelled", body: "Nothing of ride \(workoutId) is kept.", actions: []))
                ]
            default:
                return []
            }
        case .live, .hubSend:
            // The properties carry everything the desktop shows (the 3-s power, the step, who holds the trainer);
            // the item does not follow these (`RecorderLink.followsLive`).
            return []
        case .gone:
            guard let last = status else { return [] }
            status = nil
            let riding = last.state == .running || last.state == .paused
            told = Told()
            guard riding else { return [] }
            return [
                .notify(
                    DesktopNotification(
                        summary: "The recorder stopped",
                        body:
                            "Ride \(last.workoutId) was being recorded: `cyclelog recover` keeps what was recorded. "
                            + "This item follows the recorder again when it starts.",
                        actions: [], urgent: true))
            ]
        }
    }

    /// The notifications the status's change since the last one calls for, in order.
    private mutating func changes() -> [Effect] {
        guard let status else { return [] }
        var effects: [Effect] = []
        if status.workoutId != told.workoutId, status.workoutId != 0 {
            told = Told(workoutId: status.workoutId)
        }
        if status.state != told.state {
            let before = told.state
            told.state = status.state
            if let notification = stateNotification(status, from: before) { effects.append(.notify(notification)) }
        }
        if status.state == .running || status.state == .paused {
            if status.lap > told.lap {
                if told.lap != 0 { effects.append(.notify(lapNotification(status))) }
                told.lap = status.lap
            }
            if status.stepIndex != told.stepIndex {
                if status.stepIndex >= 0 { effects.append(.notify(stepNotification(status))) }
                told.stepIndex = status.stepIndex
            }
        }
        if status.trainerMessage != told.trainerMessage {
            told.trainerMessage = status.trainerMessage
            // Every screen sees the trainer's words (`DataAccess`); only one with `trainer` may let it go.
            if !status.trainerMessage.isEmpty {
                // The way out of a refusal that repeats: let the trainer go free and ride on.
                let free: [DesktopNotification.Action] =
                    types.contains(.trainer) && status.trainerMode != .free
                    ? [.init(key: "free", label: "Ride free", command: .steer(.mode("free")))] : []
                effects.append(
                    .notify(
                        DesktopNotification(
                            summary: "The trainer refused", body: status.trainerMessage,
                            actions: free + rideActions(status), urgent: true)))
            }
        }
        return effects
    }

    private func stateNotification(_ status: RecorderStatus, from before: RecorderState?) -> DesktopNotification? {
        switch status.state {
        case .running where before == .paused:
            return DesktopNotification(
                summary: "Riding again", body: "Resumed at \(ClockText.duration(status.elapsedSeconds))",
                actions: rideActions(status))
        case .running:
            return DesktopNotification(
                summary: "Ride started", body: rideName(status), actions: rideActions(status))
        case .armed:
            return DesktopNotification(
                summary: "Ride armed", body: rideName(status) + " — it starts at the first pedal stroke",
                actions: rideActions(status))
        case .paused:
            return DesktopNotification(
                summary: "Ride paused", body: "At \(ClockText.duration(status.elapsedSeconds))",
                actions: rideActions(status))
        case .ended, .cancelled, .waiting, .notStarted, nil:
            // An end and a cancel are told by their events (`apply`).
            return nil
        }
    }

    private func lapNotification(_ status: RecorderStatus) -> DesktopNotification {
        DesktopNotification(
            summary: "Lap \(status.lap)", body: "At \(ClockText.duration(status.elapsedSeconds))",
            actions: rideActions(status))
    }

    private func stepNotification(_ status: RecorderStatus) -> DesktopNotification {
        guard status.stepIndex < status.stepCount else {
            return DesktopNotification(
                summary: "Workout complete", body: status.workoutPlanName, actions: rideActions(status))
        }
        let name = status.stepName.isEmpty ? "" : ": \(status.stepName)"
        var body = "Step \(status.stepIndex + 1) of \(status.stepCount)\(name)"
        if let target = Self.targetText(status) { body += " — \(target)" }
        return DesktopNotification(
            summary: status.workoutPlanName.isEmpty ? "Next step" : status.workoutPlanName, body: body,
            actions: rideActions(status))
    }

    /// The ride's name as the rider gave it, else its number.
    private func rideName(_ status: RecorderStatus) -> String {
        status.name.isEmpty ? "Ride \(status.workoutId)" : status.name
    }

    // MARK: A saved ride

    /// What the store said of a saved ride: the notification that says it.
    public func saved(_ ride: SavedRide) -> DesktopNotification {
        var parts = [ClockText.duration(ride.movingSeconds)]
        if types.contains(.speed), ride.distanceMeters > 0 {
            parts.append(Self.number(ride.distanceMeters / 1000, decimals: 1) + " km")
        }
        if types.contains(.power), let power = ride.averagePowerWatts { parts.append("\(Self.watts(power)) average") }
        if types.contains(.energy), let work = ride.workJoules { parts.append("\(Int((work / 1000).rounded())) kJ") }
        if types.contains(.hr), let heartRate = ride.averageHeartRateBPM {
            parts.append("\(Self.bpm(heartRate)) average")
        }
        var body = parts.joined(separator: " · ")
        if types.contains(.power), let ftp = ride.ftp {
            body += "\n" + ftp.text
        }
        return DesktopNotification(
            summary: "Ride \(ride.workoutId) saved" + (ride.name.isEmpty ? "" : ": \(ride.name)"), body: body,
            actions: [])
    }

    // MARK: The status item

    /// Which of the item's four icons.
    public enum Icon: Sendable, Equatable {
        case noRecorder, waiting, recording, paused
    }

    public var icon: Icon {
        switch status?.state {
        case nil: .noRecorder
        case .running?, .armed?: .recording
        case .paused?: .paused
        default: .waiting
        }
    }

    /// The item's title: the live numbers in one line (hosts show it beside the icon, or as its name).
    public var title: String {
        guard let status else { return "cyclelog: no recorder running" }
        switch status.state {
        case .running?, .paused?:
            var parts: [String] = []
            if types.contains(.power) { parts.append(status.powerWatts.map(Self.watts) ?? "— W") }
            if types.contains(.hr) { parts.append(status.heartRateBPM.map(Self.bpm) ?? "— bpm") }
            parts.append(ClockText.duration(status.elapsedSeconds) + (status.state == .paused ? " paused" : ""))
            return parts.joined(separator: " · ")
        case .armed?: return "cyclelog: armed, starts at the first pedal stroke"
        case .ended?: return "cyclelog: saving the ride"
        default: return "cyclelog: waiting for a ride"
        }
    }

    /// The tooltip's heading and its lines.
    public var tooltip: (title: String, body: String) {
        guard let status, status.state == .running || status.state == .paused else { return (title, "") }
        var lines: [String] = []
        let name = rideName(status)
        lines.append("\(name) · lap \(status.lap) · \(ClockText.duration(status.elapsedSeconds))")
        var numbers: [String] = []
        if types.contains(.power) { numbers.append("power " + (status.powerWatts.map(Self.watts) ?? "—")) }
        if types.contains(.cadence) {
            numbers.append("cadence " + (status.cadenceRPM.map { "\(Int($0.rounded())) rpm" } ?? "—"))
        }
        if types.contains(.hr) {
            numbers.append("heart rate " + (status.heartRateBPM.map(Self.bpm) ?? "—"))
        }
        if types.contains(.speed), status.distanceMeters > 0 {
            numbers.append(Self.number(status.distanceMeters / 1000, decimals: 1) + " km")
        }
        if !numbers.isEmpty { lines.append(numbers.joined(separator: " · ")) }
        if status.stepIndex >= 0, status.stepIndex < status.stepCount {
            var step = "Step \(status.stepIndex + 1)/\(status.stepCount)"
            if !status.stepName.isEmpty { step += " \(status.stepName)" }
            if let target = Self.targetText(status) { step += " at \(target)" }
            if let left = status.stepSecondsLeft { step += ", \(ClockText.duration(left)) left" }
            lines.append(step)
        }
        if !status.trainerMessage.isEmpty { lines.append(status.trainerMessage) }
        return (title, lines.joined(separator: "\n"))
    }

    /// One entry of the item's menu.
    public struct MenuEntry: Sendable, Equatable {
        public var label: String
        public var enabled: Bool
        /// What choosing it asks of the recorder; nil for a line that only says something.
        public var command: RecorderCommand?
        /// A submenu's entries (Start's workouts).
        public var children: [MenuEntry] = []
    }

    /// The menu: Start (a submenu of the suggested workouts), Pause or Resume, Lap, End, and Undo naming the action
    /// it takes back ("Undo lap 4"); without the `ride` type a line that says the controls were not granted.
    public var menu: [MenuEntry] {
        guard let status else { return [MenuEntry(label: "No recorder running", enabled: false)] }
        guard types.contains(.ride) else {
            return [MenuEntry(label: "Controls not granted (--types control)", enabled: false)]
        }
        let starts =
            status.suggestedWorkouts.map {
                MenuEntry(label: $0.title, enabled: status.can.start, command: .start(style: ["preset": .text($0.id)]))
            } + [MenuEntry(label: "Open ride", enabled: status.can.start, command: .start(style: [:]))]
        let pauseOrResume =
            status.can.resume
            ? MenuEntry(label: "Resume", enabled: true, command: .control(.resume))
            : MenuEntry(label: "Pause", enabled: status.can.pause, command: .control(.pause))
        return [
            MenuEntry(label: "Start", enabled: status.can.start, children: starts),
            pauseOrResume,
            MenuEntry(label: "Lap", enabled: status.can.lap, command: .control(.lap)),
            MenuEntry(label: "End", enabled: status.can.end, command: .control(.end)),
            undoEntry(status),
        ]
    }

    /// "Undo lap 4" while the recorder offers an action this desktop may take back (its type granted), by its
    /// number; a greyed "Undo" otherwise.
    func undoEntry(_ status: RecorderStatus) -> MenuEntry {
        let type = DataType(rawValue: status.undoType)
        guard status.undoId > 0, type.map(types.contains) ?? true else {
            return MenuEntry(label: "Undo", enabled: false)
        }
        return MenuEntry(label: "Undo \(status.undoAction)", enabled: true, command: .undo(action: status.undoId))
    }

    /// The controls a notification offers now: those the recorder would take, when the desktop may control.
    func rideActions(_ status: RecorderStatus) -> [DesktopNotification.Action] {
        guard types.contains(.ride) else { return [] }
        var actions: [DesktopNotification.Action] = []
        if status.can.pause { actions.append(.init(key: "pause", label: "Pause", command: .control(.pause))) }
        if status.can.resume { actions.append(.init(key: "resume", label: "Resume", command: .control(.resume))) }
        if status.can.lap { actions.append(.init(key: "lap", label: "Lap", command: .control(.lap))) }
        if status.can.end { actions.append(.init(key: "end", label: "End", command: .control(.end))) }
        return actions
    }

    // MARK: Words

    /// The step's target: its range, its power, or its grade.
    static func targetText(_ status: RecorderStatus) -> String? {
        if let low = status.targetRangeLowWatts, let high = status.targetRangeHighWatts {
            return "\(Int(low.rounded()))–\(Int(high.rounded())) W"
        }
        if let target = status.targetPowerWatts { return watts(target) }
        if let grade = status.gradePercent { return number(grade, decimals: 1) + " %" }
        return nil
    }

    static func watts(_ value: Double) -> String { "\(Int(value.rounded())) W" }

    static func bpm(_ value: Double) -> String { "\(Int(value.rounded())) bpm" }

    /// `32.4`, or `32` when whole at that precision.
    static func number(_ value: Double, decimals: Int) -> String {
        JSONValue.rounded(value, decimals).rendered()
    }
}

/// One notification: its text and the controls it offers.
public struct DesktopNotification: Sendable, Equatable {
    public var summary: String
    public var body: String
    public var actions: [Action]
    /// A refusal or a recorder gone mid-ride: critical urgency, kept on screen until read.
    public var urgent = false

    public struct Action: Sendable, Equatable {
        /// The key the notification daemon sends back (`ActionInvoked`).
        public var key: String
        public var label: String
        public var command: RecorderCommand
    }
}

/// What the desktop says of a saved ride, read from the store.
public struct SavedRide: Sendable, Equatable {
    public var workoutId: Int64
    public var name: String
    public var movingSeconds: Double
    public var distanceMeters: Double
    public var averagePowerWatts: Double?
    public var workJoules: Double?
    public var averageHeartRateBPM: Double?
    /// The FTP this ride set or proposed; nil when it changed nothing.
    public var ftp: FTPChange?

    public struct FTPChange: Sendable, Equatable {
        public var watts: Double
        /// The FTP before this ride; nil when none was known.
        public var previousWatts: Double?
        /// True when a manual FTP holds and the new value waits for `cyclelog ftp accept`.
        public var pending: Bool

        var text: String {
            let was = previousWatts.map { " (was \(DesktopFace.watts($0)))" } ?? ""
            return pending
                ? "New FTP \(DesktopFace.watts(watts)) waits for you: `cyclelog ftp accept`\(was)"
                : "FTP now \(DesktopFace.watts(watts))\(was)"
        }
    }
}
