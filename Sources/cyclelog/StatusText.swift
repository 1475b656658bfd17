import Formats
import RecorderInterface

/// `cyclelog status` as a rider reads it: the recorder's properties (`RecorderStatus`) in the dashboard's words
/// and units, local and rounded as the summaries are; `status --json` keeps every property for scripts.
enum StatusText {
    static func render(_ s: RecorderStatus) -> [String] {
        var lines: [String]
        switch s.state {
        case .waiting: lines = ["Waiting for a ride (`cyclelog start`, a launcher or the phone starts one)."]
        case .armed: lines = ["Armed: the ride starts at the first pedal stroke (`cyclelog cancel` drops it)."]
        default:
            let name = s.name.isEmpty ? "" : " \"\(ShownText.visible(s.name))\""
            lines = [
                "Workout \(s.workoutId)\(name): \(s.state?.rawValue ?? ""), \(SummaryText.duration(s.elapsedSeconds)) "
                    + "(moving \(SummaryText.duration(s.movingSeconds))), lap \(s.lap) "
                    + "(\(SummaryText.duration(s.lapElapsedSeconds)))"
                    + (s.goalProgress.map { ", goal \(Int(($0 * 100).rounded())) %" } ?? ""),
                "  now        power (3 s) \(SummaryText.whole(s.powerWatts)) W   cadence "
                    + "\(SummaryText.whole(s.cadenceRPM)) rpm   speed \(SummaryText.kmh(s.speedMetersPerSecond)) km/h   "
                    + "heart rate \(SummaryText.whole(s.heartRateBPM)) bpm",
                "  so far     \(SummaryText.fixed(s.distanceMeters / 1000, 2)) km   "
                    + "\(SummaryText.whole(s.workJoules / 1000)) kJ"
                    + (s.waterMillilitres > 0 ? "   water \(SummaryText.amount(s.waterMillilitres)) ml" : ""),
            ]
        }
        for sensor in s.sensors {
            lines.append(
                "  sensor     \(SummaryText.pad(ShownText.visible(sensor.name), 24)) \(sensor.state?.rawValue ?? "")"
                    + (sensor.batteryPercent.map { ", battery \($0) %" } ?? ""))
        }
        if let trainerState = s.trainerState, trainerState != .absent {
            lines.append("  trainer    " + TrainerCommand.describe(s).dropFirst("Trainer: ".count))
            if let offset = s.powerMatchOffsetWatts {
                lines.append("             power match \(SummaryText.whole(offset)) W")
            }
            if !s.trainerMessage.isEmpty { lines.append("             " + ShownText.visible(s.trainerMessage)) }
            if !s.trainerHolder.isEmpty {
                lines.append("             steered by \(ShownText.visible(s.trainerHolder)) through the hub")
            }
        }
        if !s.hubApps.isEmpty { lines.append("  hub        " + ShownText.visible(s.hubApps)) }
        if s.stepIndex >= 0 {
            let step = s.stepName.isEmpty ? "" : " \"\(ShownText.visible(s.stepName))\""
            var words = [
                "  workout    \(ShownText.visible(s.workoutPlanName)): step \(s.stepIndex + 1) of \(s.stepCount)\(step)"
            ]
            if let left = s.stepSecondsLeft { words.append("\(SummaryText.duration(left)) left") }
            if let target = s.targetPowerWatts { words.append("target \(SummaryText.whole(target)) W") }
            if let next = s.nextTargetPowerWatts { words.append("next \(SummaryText.whole(next)) W") }
            if s.intensityPercent != 100 { words.append("intensity \(s.intensityPercent) %") }
            lines.append(words.joined(separator: ", "))
        }
        if let line = undoLine(s) { lines.append("  undo       " + line) }
        return lines
    }

    /// `4: lap 4 (25 s left, `cyclelog undo` undoes it)`; an ended ride's End: when it is saved. `key` is how this
    /// screen undoes. Nil with nothing to undo.
    static func undoLine(_ s: RecorderStatus, key: String = "`cyclelog undo`") -> String? {
        guard s.undoId > 0, let left = s.undoSecondsLeft else { return nil }
        let seconds = "\(Int(left)) s"
        if s.state == .ended {
            return "the ride is saved in \(seconds): \(key) goes on with it"
        }
        return "\(s.undoId): \(ShownText.visible(s.undoAction)) (\(seconds) left, \(key) undoes it)"
    }
}
