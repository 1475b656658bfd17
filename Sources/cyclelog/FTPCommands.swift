import ArgumentParser
import ExitStatus
import Formats
import Foundation
import Recording
import RideHistory
import RideWriting
import WorkoutStore
import Workouts

/// `cyclelog ftp`: the FTP in force and how it was found; `set`, `accept` and `test` change it.
struct FTP: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ftp",
        abstract: "Shows the FTP in force with the efforts behind it, and sets, accepts or tests it.",
        subcommands: [FTPShow.self, FTPSet.self, FTPAccept.self, FTPTest.self],
        defaultSubcommand: FTPShow.self)
}

/// A number of days, written `42d`, `6w` or `42`.
struct Days: ExpressibleByArgument {
    var days: Int

    init?(argument: String) {
        guard let days = PowerCurveReport.days(argument) else { return nil }
        self.days = days
    }

    /// How help shows a default: "42d", as it is typed.
    var defaultValueDescription: String { "\(days)d" }
}

struct FTPShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "The FTP in force, the critical-power fit and best 20 minutes of the window, and the history.",
        discussion: """
            The window ends with the newest stored ride. The automatic FTP is the critical power of an envelope fit \
            of the window's best power curve (efforts of 3 to 20 minutes); 95 % of the best 20 minutes is shown \
            beside it.
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(help: "The window of rides, in days (42d) or weeks (6w).")
    var window = Days(argument: "42d")!

    @Flag(help: "List every FTP value with its method, rides and dates.")
    var history = false

    @Flag(help: "Print JSON (its keys: Docs/reference/json.md, \"The FTP\").")
    var json = false

    func run() throws {
        let report = try FTPReport(try database.openRides(), days: window.days, wholeHistory: json || history)
        sayOnStandardOutput(json ? report.json.rendered() : report.text(withHistory: history))
    }
}

struct FTPSet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Sets the FTP by hand; it holds until you accept a newer automatic value (`cyclelog ftp accept`).")

    @Argument(help: "FTP in watts.")
    var watts: Double

    @Option(help: "The date it holds from, such as 2024-05-01 (default: now).")
    var from: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard watts > 0, watts < 2000 else { throw ValidationError("an FTP is between 1 and 2000 W (got \(watts))") }
        if let from, UTCTime.parseDate(from) == nil {
            throw ValidationError("--from takes a date such as 2024-05-01 or 2024-05-01T08:00:00Z (got '\(from)')")
        }
    }

    func run() throws {
        let store = try database.open()
        let now = wallClockMicroseconds()
        let start = from.flatMap(UTCTime.parseDate) ?? now
        try store.setManualFTP(watts: watts, fromMicroseconds: start, nowMicroseconds: now)
        sayOnStandardOutput("FTP set to \(Int(watts.rounded())) W from \(SummaryText.zonedDateTime(start)).")
    }
}

struct FTPAccept: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accept", abstract: "Puts the automatic FTP back in force over a manual value.")

    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let store = try database.open()
        guard let accepted = try store.acceptPendingFTP(nowMicroseconds: wallClockMicroseconds()) else {
            throw CommandFailure("no automatic FTP newer than your manual value is waiting")
        }
        sayOnStandardOutput("FTP \(Int(accepted.watts.rounded())) W (\(accepted.method.rawValue)) is in force again.")
    }
}

struct FTPTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Marks a stored workout as an FTP test (20min: 0.95 × 20-min power; ramp: 0.75 × best minute).")

    @OptionGroup var reference: WorkoutReference

    @Argument(help: "20min, ramp, or none to unmark.")
    var protocolName: String

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard protocolName == "none" || FitnessTest(rawValue: protocolName) != nil else {
            throw ValidationError("the test is 20min, ramp or none (got '\(protocolName)')")
        }
    }

    func run() throws {
        let store = try database.open()
        let id = try reference.resolve(in: store)
        try store.setFitnessTest(id, FitnessTest(rawValue: protocolName))
        let inForce = try store.ftpHistory(asOf: [.max]).inForce(at: .max)
        sayOnStandardOutput(
            "Workout \(id) is \(protocolName == "none" ? "no longer a test" : "a \(protocolName) test"); FTP in force: "
                + (inForce.map { "\(Int($0.watts.rounded())) W (\($0.method.rawValue))" } ?? "none"))
    }
}

extension FTPReport {
    func text(withHistory: Bool, nowMicroseconds: Int64 = wallClockMicroseconds()) -> String {
        var lines: [String] = []
        if let inForce {
            // A test's value names its ride (`cyclelog show ID` shows the test and its score).
            let ride =
                [.rampTest, .best20Minutes].contains(inForce.method)
                ? inForce.workoutId.map { " (workout \($0), `cyclelog show \($0)`)" } ?? "" : ""
            lines.append(
                "FTP \(SummaryText.whole(inForce.watts)) W — \(Self.methodWords(inForce.method))\(ride), since "
                    + SummaryText.zonedDateTime(inForce.effectiveMicroseconds) + age(of: inForce, now: nowMicroseconds))
        } else if !hasRides {
            lines.append("No FTP yet: no rides stored.")
        } else {
            lines.append(
                "No FTP in force yet"
                    + (best20.map {
                        ": 95 % of your best 20 minutes is \(SummaryText.whole(0.95 * $0.watts)) W (workout "
                            + "\($0.workoutId)) — `cyclelog ftp set \(SummaryText.whole(0.95 * $0.watts))` uses it"
                    } ?? "")
                    + ". An automatic FTP needs hard efforts of 3–5 and 12–20 minutes on at least two rides within "
                    + "\(window.days) days, or a declared test (`cyclelog ftp test`).")
        }
        if let pending = history.pending(at: .max) {
            lines.append(
                "  a newer automatic value is waiting: \(SummaryText.whole(pending.watts)) W "
                    + "(`cyclelog ftp accept` puts it in force)")
        }
        // The value in force comes from the window that ended with the ride it was estimated after; when the newest
        // window says something else, both are shown, each under its own dates.
        let inForceDiffers =
            inForce.map { $0.method == .criticalPower && abs((estimate?.watts ?? -1) - $0.watts) >= 0.5 } ?? false
        if let inForce, inForceDiffers {
            if let model = inForce.criticalPower {
                lines.append(
                    "  from the \(inForce.windowDays ?? window.days) days up to "
                        + "\(SummaryText.dateTime(inForce.effectiveMicroseconds)): critical power "
                        + "\(SummaryText.fixed(model.criticalPowerWatts, 1)) W, "
                        + "W′ \(SummaryText.fixed(model.wPrimeJoules / 1000, 1)) kJ")
            }
            lines += inForce.efforts.map(effortLine)
        }
        lines.append(
            (inForceDiffers ? "Newest window: " : "Window: ")
                + "\(window.days) days, \(SummaryText.dateTime(window.startMicroseconds)) – "
                + "\(SummaryText.dateTime(window.endMicroseconds)), "
                + SummaryText.count(window.rideCount, "ride", "rides"))
        if let model = estimate?.criticalPower {
            lines.append(
                "  critical power \(SummaryText.fixed(model.criticalPowerWatts, 1)) W, "
                    + "W′ \(SummaryText.fixed(model.wPrimeJoules / 1000, 1)) kJ (envelope fit, 3–20 min)")
        } else {
            lines.append("  no critical-power fit passes the checks in this window")
        }
        if let best20 {
            lines.append(
                "  best 20 min \(SummaryText.fixed(best20.watts, 1)) W → 95 % = "
                    + "\(SummaryText.fixed(0.95 * best20.watts, 1)) W (workout \(best20.workoutId), "
                    + "\(SummaryText.dateTime(best20.rideStartMicroseconds)))")
        }
        // The best 20 minutes has its line above: not again as an effort.
        lines += (estimate?.efforts ?? []).filter { effort in
            !(effort.durationSeconds == 1200 && effort.workoutId == best20?.workoutId)
        }.map(effortLine)
        if withHistory {
            if history.entries.isEmpty {
                lines.append("History: no FTP value yet.")
            } else {
                lines.append("History:")
                lines.append(
                    "  " + "date (\(SummaryText.zoneHeading))".padding(toLength: 19, withPad: " ", startingAt: 0)
                        + "  FTP W  method                 workout  efforts")
            }
            for entry in history.entries {
                let efforts = entry.efforts.map {
                    "\($0.durationSeconds) s \(SummaryText.whole($0.watts)) W (#\($0.workoutId))"
                }
                lines.append(
                    "  \(SummaryText.dateTime(entry.effectiveMicroseconds))  "
                        + SummaryText.pad(SummaryText.whole(entry.watts), 5) + "  "
                        + entry.method.rawValue.padding(toLength: 21, withPad: " ", startingAt: 0) + "  "
                        + SummaryText.pad(entry.workoutId.map(String.init) ?? "-", 7) + "  "
                        + efforts.joined(separator: ", "))
            }
        }
        return lines.joined(separator: "\n")
    }

    private func effortLine(_ effort: FTPEffort) -> String {
        "  effort \(SummaryText.label(effort.durationSeconds)) (\(effort.durationSeconds) s) "
            + "\(SummaryText.fixed(effort.watts, 1)) W — workout \(effort.workoutId), "
            + SummaryText.dateTime(effort.rideStartMicroseconds)
    }

    /// How old a value is, when older than the window: an FTP from long ago is shown with its age and what renews it.
    private func age(of value: FTPEstimate, now: Int64) -> String {
        let days = (now - value.effectiveMicroseconds) / 86_400_000_000
        guard days > Int64(window.days) else { return "" }
        let age =
            days >= 730
            ? "\(days / 365) years" : days >= 60 ? "\(days / 30) months" : "\(days) days"
        return " (\(age) ago: a hard ride, a test or `cyclelog ftp set` renews it)"
    }

    static func methodWords(_ method: FTPMethod) -> String {
        switch method {
        case .criticalPower: "critical power from your rides"
        case .best20Minutes: "95 % of a 20-minute test"
        case .rampTest: "75 % of a ramp test's best minute"
        case .manual: "set by hand"
        }
    }
}
