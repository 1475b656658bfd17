import Formats
import Foundation
import WorkoutStore
import Workouts

/// The readable summary a rider sees after a replay and in `cyclelog show`.
enum SummaryText {
    /// `calibrations`: the calibrations to show with the ride's sensors (`CalibrationText.before`).
    static func render(_ summary: WorkoutSummary, calibrations: [Calibration] = []) -> String {
        let s = summary.statistics
        var lines: [String] = []
        let name = summary.plan.name.map { " \"\($0)\"" } ?? ""
        // The version matters once the ride was changed (renamed, rebuilt); its identity is in `show --json`.
        let version = summary.version > 1 ? " (version \(summary.version): changed since it was saved)" : ""
        lines.append("Workout \(summary.id)\(name) — \(summary.state.rawValue)\(version)")
        lines.append("  start        \(zonedDateTime(summary.startMicroseconds))")
        lines.append("  elapsed      \(duration(s.elapsedSeconds))   moving \(duration(s.movingSeconds))")
        if s.distanceMeters > 0 || s.averageSpeedMetersPerSecond != nil {
            lines.append(
                "  distance     \(fixed(s.distanceMeters / 1000, 2)) km   speed avg \(kmh(s.averageSpeedMetersPerSecond)) "
                    + "max \(kmh(s.maximumSpeedMetersPerSecond)) km/h")
        }
        if s.averagePowerWatts != nil {
            lines.append(
                "  power        avg \(whole(s.averagePowerWatts)) W   max \(whole(s.maximumPowerWatts)) W   "
                    + "NP " + (s.normalizedPowerWatts.map { "\(whole($0)) W" } ?? "– (under 30 s)")
                    + "   work \(whole(s.workJoules.map { $0 / 1000 })) kJ")
        }
        if s.maximumCadenceRPM != nil {
            lines.append("  cadence      avg \(whole(s.averageCadenceRPM)) rpm   max \(whole(s.maximumCadenceRPM)) rpm")
        }
        if s.averageHeartRateBPM != nil {
            lines.append(
                "  heart rate   avg \(whole(s.averageHeartRateBPM)) bpm   max \(whole(s.maximumHeartRateBPM)) bpm")
        }
        lines += analysisLines(summary)
        if let test = summary.analysis?.test { lines.append("  FTP test     " + test.words) }
        if !s.powerCurveWatts.isEmpty {
            let shown = [1, 5, 60, 300, 1200, 3600].compactMap { d in
                s.powerCurveWatts[d].map { "\(label(d)) \(Int($0.rounded())) W" }
            }
            lines.append("  best power   " + shown.joined(separator: " · "))
        }
        if let goal = summary.plan.goal {
            let progress = goal.progress(
                movingSeconds: s.movingSeconds, distanceMeters: s.distanceMeters, workJoules: s.workJoules)
            lines.append(
                "  goal         \(goal.shown)"
                    + (progress.flatMap { $0.isFinite ? $0 : nil }.map {
                        $0 >= 1 ? ", reached" : ", \(Int(($0 * 100).rounded(.down))) % reached"
                    } ?? ""))
        }
        if let preset = summary.plan.preset {
            lines.append("  started as   \(preset)")
        }
        var pausedAt: Int64?
        for event in summary.events {
            let at = duration(Double(event.timeMicroseconds - summary.startMicroseconds) / 1_000_000)
            switch event.control {
            case .pause: pausedAt = event.timeMicroseconds
            case .resume, .end:
                if let since = pausedAt {
                    lines.append(
                        "  paused       \(duration(Double(since - summary.startMicroseconds) / 1_000_000))  for "
                            + duration(Double(event.timeMicroseconds - since) / 1_000_000))
                }
                pausedAt = nil
            // The automatic pause's own markers are not the rider's: they show as moving time.
            case .marker(let text) where !event.isAutoPauseMarker:
                lines.append("  marker       \(at)  \(text)")
            case .intake(let intake):
                lines.append(
                    "  intake       \(at)  \(intake.kind.rawValue) \(amount(intake.amount)) \(intake.kind.unit)")
            default: break
            }
        }
        if let water = summary.waterMillilitres {
            lines.append("  water        \(amount(water)) ml in all")
        }
        if summary.laps.count > 1 {
            for lap in summary.laps {
                let l = lap.statistics
                // The label column is 13 wide like the others ("lap 1", "lap 12", "lap 140" all line up).
                let label = "lap \(lap.number)"
                lines.append(
                    "  \(label)\(String(repeating: " ", count: max(1, 13 - label.count)))\(duration(l.movingSeconds))   \(fixed(l.distanceMeters / 1000, 2)) km   "
                        + (l.averagePowerWatts.map { "avg \(whole($0)) W" } ?? "no power")
                        // NP needs 30 s of power: a shorter lap has none, and says so rather than "NP - W".
                        + (l.averagePowerWatts == nil
                            ? "" : "   NP " + (l.normalizedPowerWatts.map { "\(whole($0)) W" } ?? "– (under 30 s)")))
            }
        }
        if let trainer = summary.statistics.trainer {
            let names = ["erg": "ERG", "sim": "simulation", "resistance": "resistance", "free": "free"]
            let modes = TrainerTarget.modes.compactMap { mode in
                trainer.secondsByMode[mode].map { "\(names[mode] ?? mode) \(duration(Double($0)))" }
            }
            lines.append(
                "  trainer      " + (modes.isEmpty ? "no running time" : modes.joined(separator: ", "))
                    + (trainer.ergMeanAbsoluteDifferenceWatts.map {
                        "; ERG within \(fixed($0, 1)) W of its target on average"
                    }
                        ?? ""))
            if !trainer.apps.isEmpty {
                lines.append(
                    "  steered by   \(ShownText.visible(trainer.apps.joined(separator: ", "))) through the hub for "
                        + duration(Double(trainer.appSeconds)))
            }
        }
        if let plan = summary.statistics.plan {
            lines.append(
                "  workout      \(plan.workoutName)"
                    + (plan.ftpWatts.map { " at FTP \($0) W" } ?? "")
                    + (plan.completed
                        ? ", completed" : ", \(Set(plan.steps.map(\.index)).count) of \(plan.stepCount) steps")
                    + (plan.compliancePercent.map { "; \(fixed($0, 0)) % of the seconds on target" } ?? ""))
            if !plan.steps.isEmpty { lines.append("   step   time    target    power   on target  cadence") }
            for step in plan.steps {
                let target = step.meanTargetWatts.map { "\(whole($0)) W" } ?? "free"
                let power = step.meanPowerWatts.map { "\(whole($0)) W" } ?? "-"
                let share = step.compliancePercent.map { "\(fixed($0, 0)) %" } ?? "-"
                let cadence =
                    step.meanCadenceRPM.map {
                        "\(whole($0)) rpm" + (step.cadenceTarget.map { " (\($0.lowerBound)–\($0.upperBound))" } ?? "")
                    }
                    ?? "-"
                lines.append(
                    "   "
                        + [
                            pad("\(step.index + 1)", 4), pad(duration(Double(step.runningSeconds)), 7), pad(target, 9),
                            pad(power, 8), pad(share, 10), cadence,
                        ].joined(separator: " "))
            }
        }
        let rejected = Channel.allCases.compactMap { channel in
            summary.statistics.rejectedSeconds[channel].map { "\($0) s of \(channel.name)" }
        }
        if !rejected.isEmpty {
            lines.append(
                "  rejected     \(rejected.joined(separator: ", ")) (implausible values: the plausibility rules)")
        }
        for correction in summary.statistics.corrections {
            lines.append("  corrected    \(correction)")
        }
        for part in summary.damagedParts {
            lines.append("  damaged      \(part) (`cyclelog doctor`)")
        }
        if summary.problemCount > 0 {
            let count = summary.problemCount
            lines.append(
                "  problems     \(count) in its events (malformed values, refused controls, clock faults), kept in "
                    + "its journal: `cyclelog rebuild \(summary.id)` lists them")
        }
        for dropout in summary.dropouts {
            let seconds = Double(dropout.endMicroseconds - dropout.startMicroseconds) / 1_000_000
            let offset = Double(dropout.startMicroseconds - summary.startMicroseconds) / 1_000_000
            let sensor = summary.sensors.first { $0.address == dropout.sensor }?.name ?? dropout.sensor
            lines.append(
                "  gap          \(sensor) \(dropout.reason) for \(fixed(seconds, 1)) s at \(duration(offset))")
        }
        for sensor in summary.sensors {
            let battery = sensor.batteryPercent.map { "   battery \($0) %" } ?? ""
            // A replayed capture knows its sensors by address only.
            let shownAs = sensor.name.map { "\($0) (\(sensor.address))" } ?? sensor.address
            lines.append("  sensor       \(shownAs)\(battery)")
            for calibration in calibrations where calibration.address == sensor.address {
                lines.append("               calibrated \(CalibrationText.line(calibration))")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// FTP-based metrics, the other power metrics and the zones.
    static func analysisLines(_ summary: WorkoutSummary) -> [String] {
        guard let analysis = summary.analysis, summary.statistics.averagePowerWatts != nil else { return [] }
        var lines: [String] = []
        if let ftp = analysis.ftp, let factor = summary.intensityFactor, let stress = summary.trainingStressScore {
            lines.append(
                "  FTP \(whole(ftp.watts)) W (\(ftp.method.rawValue))   IF \(fixed(factor, 2))   TSS \(whole(stress))")
        } else {
            lines.append("  FTP          none known on this date, so no IF, TSS or zones")
        }
        var more: [String] = []
        if let value = analysis.variabilityIndex { more.append("VI \(fixed(value, 2))") }
        if let value = analysis.xPowerWatts { more.append("xPower \(whole(value)) W") }
        if let value = analysis.efficiencyFactor { more.append("EF \(fixed(value, 2))") }
        if let value = analysis.aerobicDecouplingPercent { more.append("Pw:Hr \(fixed(value, 1)) %") }
        if let value = analysis.energyKilocalories { more.append("\(whole(value)) kcal") }
        if !more.isEmpty { lines.append("  metrics      " + more.joined(separator: "   ")) }
        if let zones = analysis.zoneSeconds {
            lines.append(
                "  zones        "
                    + zones.enumerated().map { "Z\($0.offset + 1) \(duration($0.element))" }.joined(separator: "  "))
        }
        if let model = analysis.criticalPower, let integral = analysis.wPrimeBalanceMinimumIntegralJoules,
            let differential = analysis.wPrimeBalanceMinimumDifferentialJoules
        {
            let warning = min(integral, differential) < 0 ? "  (below 0: CP/W′ do not fit this ride)" : ""
            lines.append(
                "  W′ balance   lowest \(fixed(integral / 1000, 1)) kJ (integral), \(fixed(differential / 1000, 1)) kJ "
                    + "(differential) of \(fixed(model.wPrimeJoules / 1000, 1)) kJ at CP \(whole(model.criticalPowerWatts)) W"
                    + warning)
        }
        if analysis.spikeSeconds > 0 {
            lines.append("  spikes       \(analysis.spikeSeconds) s of power spikes left out of the power curve")
        }
        return lines
    }

    static var listHeader: String {
        "   id  " + "start (\(zoneHeading))".padding(toLength: 19, withPad: " ", startingAt: 0)
            + "  duration   distance   avg power  name"
    }

    static func listLine(_ entry: WorkoutStore.ListEntry, sameRideAs counted: Int64? = nil) -> String {
        let id = String(entry.id)
        let status =
            entry.status == .complete
            ? counted.map { "  [same ride as \($0)]" } ?? ""
            : entry.beingWritten
                ? (entry.source == "live" ? "  [recording now]" : "  [being stored]")
                : "  [unfinished]"
        return String(repeating: " ", count: max(0, 5 - id.count)) + id + "  " + dateTime(entry.startMicroseconds)
            + "  " + pad(entry.elapsedSeconds.map(duration) ?? "-", 9) + "  "
            + pad(entry.distanceMeters.map { fixed($0 / 1000, 2) + " km" } ?? "-", 9) + "  "
            + pad(entry.averagePowerWatts.map { "\(Int($0.rounded())) W" } ?? "-", 9) + "  "
            + (entry.name ?? (entry.source as NSString).lastPathComponent) + status
    }

    /// A time as the rider reads it, in the local time zone (`LocalTime`). JSON, journals and files keep UTC.
    static func dateTime(_ microseconds: Int64) -> String { LocalTime.text(microseconds: microseconds) }

    /// The same with the zone's abbreviation on that date ("2019-09-20 16:10:03 CEST"), where a time stands alone.
    static func zonedDateTime(_ microseconds: Int64) -> String { LocalTime.zoned(microseconds: microseconds) }

    /// What a column of local times is headed with: "UTC" on a machine kept in UTC, else "local time".
    static var zoneHeading: String {
        let identifier = TimeZone.current.identifier
        return ["UTC", "Etc/UTC", "GMT", "Etc/GMT", "Universal", "Zulu"].contains(identifier) ? "UTC" : "local time"
    }

    static func duration(_ seconds: Double) -> String { ClockText.duration(seconds) }

    static func label(_ seconds: Int) -> String {
        seconds < 60 ? "\(seconds) s" : seconds < 3600 ? "\(seconds / 60) min" : "\(seconds / 3600) h"
    }

    /// C's `%.Nf`, as `String(format:)` writes it (it hands numbers to the C library too), without Foundation
    /// parsing the format string and boxing its arguments for each number. The program never sets a locale, so
    /// the C library writes a point.
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 48) { buffer in
            let written = withVaList([value]) { vsnprintf(buffer.baseAddress, 48, "%.\(decimals)f", $0) }
            guard written >= 0, written < 48 else { return String(format: "%.\(decimals)f", value) }
            return String(
                decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(written)), as: UTF8.self)
        }
    }
    /// `250` or `354.9`: at most one decimal, none when whole.
    static func amount(_ value: Double) -> String { JSONValue.rounded(value, 1).rendered() }
    /// "1 ride", "2 rides".
    static func count(_ number: Int, _ one: String, _ many: String) -> String {
        "\(number) \(number == 1 ? one : many)"
    }

    static func whole(_ value: Double?) -> String { value.map { String(Int($0.rounded())) } ?? "-" }
    static func kmh(_ value: Double?) -> String { value.map { fixed($0 * 3.6, 1) } ?? "-" }
    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
