import ArgumentParser
import Capture
import Concurrency
import ExitStatus
import Formats
import Foundation
import LiveRecording
import ProgramMain
import Recording
import RideHistory
import RideJournal
import WorkoutStore
import Workouts

/// `--undelete`, for the commands that store rides from files (`replay`, `import`).
struct UndeleteOption: ParsableArguments {
    @Flag(
        help:
            "Store a ride that was deleted (here or on another machine) again; cyclelog-sync brings it back everywhere."
    )
    var undelete = false
}

/// The wheel size for speed and distance from sensors that do not carry their own.
struct WheelOptions: ParsableArguments {
    @Option(
        help: """
            Wheel circumference in millimetres for sensors without their own (capture, journal or remembered); \
            2105 (700×25C) when not given. Kept in the ride's journal as its `wheel *` line.
            """)
    var wheelCircumference: Int?

    func validate() throws {
        if let wheelCircumference, !(500...4000).contains(wheelCircumference) {
            throw ValidationError("--wheel-circumference is in millimetres, 500 to 4000 (a 700×25C wheel is 2105)")
        }
    }
}

/// `--db`, shared by every command that opens the workout database.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .long, help: "The workout database (default: $CYCLELOG_DB, else $XDG_DATA_HOME/cyclelog/cyclelog.sqlite)."
    )
    var db: String?

    /// Opens the database: for writing, creating the default folder on first use; for reading, read-only
    /// (Docs/reference/storage.md, "What commands do to a database"). Any problem is a message and exit status 2.
    /// The database's path: `--db`, else the default.
    var path: String { db ?? WorkoutStore.defaultPath() }

    /// Opens the database to read its rides. One named on the command line that is not there is a mistyped path,
    /// not a rider without rides: said so (the default database not there yet is a rider without rides).
    func openRides() throws -> WorkoutStore {
        if let db, !db.isEmpty, !FileManager.default.fileExists(atPath: db) {
            throw CommandFailure(
                "no database at \(db) (a mistyped --db?); `cyclelog replay` or `cyclelog record` creates one",
                .cannotUse)
        }
        return try open(.read)
    }

    func open(_ access: WorkoutStore.Access = .write) throws -> WorkoutStore {
        let folder = (path as NSString).deletingLastPathComponent
        if access == .write && db == nil && !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure(
                    "cannot create the folder \(folder) for the workout database: \(error.localizedDescription)",
                    .cannotUse)
            }
        }
        return try WorkoutStore(path: path, access: access)
    }
}

/// A workout reference: a number from `cyclelog list`, or `last`.
struct WorkoutReference: ParsableArguments {
    @Argument(help: "The workout: its id from `cyclelog list`, or `last` for the newest.")
    var workout: String

    func resolve(in store: WorkoutStore) throws -> Int64 {
        try Self.resolve(workout, in: store)
    }

    /// The id a reference names, or an exit with a message saying how to find one.
    static func resolve(_ reference: String, in store: WorkoutStore) throws -> Int64 {
        guard let id = try store.resolve(reference) else {
            throw CommandFailure("there is no workout '\(reference)'; `cyclelog list` shows them")
        }
        return id
    }

    /// A complete workout's summary, or an exit saying how to recover or discard an unfinished one.
    static func summary(_ id: Int64, in store: WorkoutStore) throws -> WorkoutSummary {
        try ride(id, in: store).summary
    }

    /// A complete workout's summary and 1 Hz series, or an exit saying how to recover or discard an unfinished one.
    static func ride(_ id: Int64, in store: WorkoutStore, analysed: Bool = true) throws -> WorkoutStore.StoredRide {
        guard let ride = try store.ride(id, analysed: analysed) else {
            let beingWritten = try store.isBeingWritten(id)
            throw CommandFailure(
                RideFiles.notShownYet(id, beingWritten: beingWritten)
                    + (beingWritten ? "; `cyclelog status` and the dashboard show a live ride as it goes" : ""))
        }
        return ride
    }
}

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replays captured rides (btsnoop or cyclelog journal) into the workout database.",
        discussion: """
            Each file becomes one workout, built by the same pipeline as a live ride. The format is detected from \
            the content: btsnoop (btmon -w, Android btsnoop_hci.log) or a cyclelog journal. Replaying the same \
            capture again finds the workout already stored instead of adding a second one.
            """)

    @Argument(help: "Capture files.")
    var files: [String]

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Print each workout's summary as JSON (keys described in the replay guide), one object per line.")
    var json = false

    @Option(
        name: .customLong("handle"),
        help: "Map a btsnoop attribute handle to a characteristic when the capture has no discovery: 0x0010=2a63.")
    var handles: [String] = []

    @OptionGroup var wheel: WheelOptions

    @Option(help: "Declare the ride an FTP test: 20min (0.95 × 20-min power) or ramp (0.75 × best minute).")
    var test: String?

    @Flag(help: "Pause the timer automatically when standing still (below 1 m/s, no power, no cadence, for 5 s).")
    var autoPause = false

    @OptionGroup var undeleting: UndeleteOption

    func validate() throws {
        _ = try handleMap()
        if let test, FitnessTest(rawValue: test) == nil {
            throw ValidationError("--test is 20min or ramp (got '\(test)')")
        }
    }

    func handleMap() throws -> [UInt16: UInt16] {
        var map: [UInt16: UInt16] = [:]
        for entry in handles {
            let parts = entry.split(separator: "=")
            func number(_ text: Substring) -> UInt16? {
                UInt16(text.lowercased().hasPrefix("0x") ? text.dropFirst(2) : text, radix: 16)
            }
            guard parts.count == 2, let handle = number(parts[0]), let uuid = number(parts[1]) else {
                throw ValidationError("--handle takes HANDLE=UUID in hex, such as 0x0010=2a63 (got '\(entry)')")
            }
            map[handle] = uuid
        }
        return map
    }

    func run() async throws {
        Stages.mark("parsed")
        let map = try handleMap()
        func load(_ file: String) throws -> CaptureFile {
            let progress = ProgressBar(label: (file as NSString).lastPathComponent)
            defer { progress?.finish() }
            return try CaptureFile.load(file, handleMap: map, progress: progress.map { bar in { bar.show($0) } })
        }
        // The first file is read while the database opens (a new one's tables take as long as a long capture).
        async let opened = database.open()
        var first = files.first.map { file in Result { try load(file) } }
        Stages.mark("capture-read")
        let store = try await opened
        Stages.mark("database-open")
        var options = Replayer.Options()
        options.wheelCircumferenceMillimetres = wheel.wheelCircumference
        options.autoPause = autoPause ? AutoPause() : nil
        options.rules.undelete = undeleting.undelete
        if let delay = ProcessInfo.processInfo.environment["CYCLELOG_TEST_PAUSE_PER_CHUNK_MS"], let ms = UInt32(delay) {
            options.pauseAfterEachChunkMicroseconds = ms * 1000
        }
        let replayer = Replayer(store: store, options: options)
        var failed: ExitStatus?
        for (index, file) in files.enumerated() {
            do {
                let capture = try first.take()?.get() ?? load(file)
                // The last capture is not freed: the process ends next.
                defer { if index == files.count - 1 { KeptUntilExit.keep(capture) } }
                var outcome = try replayer.replay(capture)
                if let test = test.flatMap(FitnessTest.init(rawValue:)) {
                    try store.setFitnessTest(outcome.summary.id, test)
                    outcome.summary = try store.summary(outcome.summary.id) ?? outcome.summary
                }
                for problem in outcome.problems { printError("warning: \(problem)") }
                if outcome.alreadyStored && !json {
                    printError("\(file): already stored as workout \(outcome.summary.id); shown as stored")
                }
                sayOnStandardOutput(json ? outcome.summary.json.rendered() : SummaryText.render(outcome.summary))
                if !outcome.alreadyStored, let notice = OverlapText.notice(after: outcome.summary.id, in: store) {
                    printError(notice)
                }
                Stages.mark("printed")
            } catch {
                printError("cyclelog: \(error)")
                failed = ExitStatus.worst(failed, error)
            }
        }
        if let failed { throw failed.saidAlready }
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Lists the stored workouts, newest first.",
        discussion: """
            Without --all, --since, --until or --search, the newest \(RideList.pageSize) and how many there are.
            """)

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Print a JSON array.")
    var json = false

    @Flag(help: "Every workout, not only the newest \(RideList.pageSize).")
    var all = false

    @Option(help: "Only rides that started on or after this date (YYYY-MM-DD) or UTC time.")
    var since: String?

    @Option(help: "Only rides that started up to this date (through its end) or UTC time.")
    var until: String?

    @Option(help: "Only rides whose name or source holds this text (any case).")
    var search: String?

    var filter: RideList.Filter {
        get throws { try RideList.Filter.parse(since: since, until: until, text: search).get() }
    }

    func validate() throws {
        do { _ = try filter } catch { throw ValidationError("--\(error)") }
    }

    func run() throws {
        let store = try database.openRides()
        let filtered = since != nil || until != nil || search != nil
        // The rider who narrows the list by date or text sees every ride that matches.
        let page = try RideList.page(in: store, try filter, newest: all || filtered ? nil : RideList.pageSize)
        let entries = page.entries
        // Read around the rides shown, not from every ride.
        let overlaps = try store.rideOverlaps(of: entries.map(\.id))
        let more =
            page.admitted > entries.count
            ? "The newest \(entries.count) of \(page.admitted) workouts: `cyclelog list --all` shows every one, "
                + "`--since 2024-05-01` those from a date on." : nil
        if json {
            sayOnStandardOutput(
                RideList.json(
                    entries, ftp: try store.ftpHistory(asOf: entries.map(\.startMicroseconds)), overlaps: overlaps
                ).rendered(pretty: true))
            // A script reading the array is told on standard error, which it does not parse.
            if let more { printError("cyclelog: \(more)") }
            return
        }
        guard !entries.isEmpty else {
            sayOnStandardOutput(
                filtered
                    ? "No workouts match; `cyclelog list` without --since, --until and --search shows every one."
                    : "No workouts yet. `cyclelog replay FILE` stores a captured ride.")
            return
        }
        sayOnStandardOutput(SummaryText.listHeader)
        for entry in entries {
            sayOnStandardOutput(SummaryText.listLine(entry, sameRideAs: overlaps.countedInstead(of: entry.id)))
        }
        if entries.contains(where: { $0.status != .complete && !$0.beingWritten }) {
            sayOnStandardOutput(
                "\nA workout marked 'unfinished' was cut short (crash, kill, power cut): `cyclelog rebuild ID` recovers"
                    + " it from its stored journal, `cyclelog delete ID` discards it.")
        }
        if entries.contains(where: { overlaps.countedInstead(of: $0.id) != nil }) {
            sayOnStandardOutput(
                "\nA workout marked 'same ride as N' overlaps ride N in time: the FTP and the weekly load count it once"
                    + " (`cyclelog duplicates`).")
        }
        if let more { sayOnStandardOutput("\n" + more) }
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Shows one workout's summary, laps, events and dropouts.")

    @OptionGroup var reference: WorkoutReference
    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Print the summary as JSON (keys described in the replay guide).")
    var json = false

    @Flag(help: "Print the raw journal stored with the workout instead (the cyclelog journal format).")
    var journal = false

    @Flag(
        help: ArgumentHelp(
            "Print what went between the sensor hub and its apps instead, as journal lines.",
            discussion:
                "Each value the hub re-broadcast (hub-send), made again from the journal: byte for byte what it "
                + "sent when it heard the ride from its start (`record --bridge`); and the apps' writes, the answers "
                + "and who held the trainer, as the journal has them."))
    var hub = false

    func validate() throws {
        if [json, journal, hub].filter({ $0 }).count > 1 {
            throw ValidationError("--json, --journal and --hub each print the workout another way: give one")
        }
    }

    func run() throws {
        let store = try database.openRides()
        let id = try reference.resolve(in: store)
        if journal || hub {
            let events = try store.journal(id)
            if events.isEmpty, let file = try store.importedFile(id) {
                throw CommandFailure(
                    "workout \(id) was imported from \(file.fileName): it has no journal, its FIT file is kept instead")
            }
            sayOnStandardOutput(Journal.text(hub ? HubReplay.exchanges(events) : events), terminator: "")
            return
        }
        let summary = try WorkoutReference.summary(id, in: store)
        sayOnStandardOutput(
            json
                ? summary.json.rendered()
                : SummaryText.render(summary, calibrations: CalibrationText.before(summary, in: store)))
    }
}

struct Rebuild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuilds a workout from its stored raw journal (after an update, or to recover an unfinished one).")

    @OptionGroup var reference: WorkoutReference
    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func run() throws {
        let store = try database.open()
        let id = try reference.resolve(in: store)
        do {
            let outcome = try Replayer(store: store).rebuild(id)
            for problem in outcome.problems { printError("warning: \(problem)") }
            sayOnStandardOutput(json ? outcome.summary.json.rendered() : SummaryText.render(outcome.summary))
        }
    }
}

struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Deletes a workout and everything stored with it.")

    @OptionGroup var reference: WorkoutReference
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let store = try database.open()
        let id = try reference.resolve(in: store)
        _ = try store.delete(id)
        sayOnStandardOutput("Deleted workout \(id).")
    }
}

struct Rename: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Names a saved workout (its next version: cyclelog-sync passes the name on).",
        discussion: "The name stays through `rebuild` and a replay of the same ride; `show` and `list` use it.")

    @OptionGroup var reference: WorkoutReference
    @Argument(help: "The new name, 1 to 200 characters.") var name: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        guard let valid = WorkoutPlan.name(name) else {
            throw ValidationError("'\(ShownText.cut(name, to: 40))' cannot name a ride: \(WorkoutPlan.nameRule)")
        }
        let store = try database.open()
        let id = try reference.resolve(in: store)
        let changed = try store.rename(id, to: valid)
        sayOnStandardOutput(
            changed ? "Workout \(id) is now named \(ShownText.visible(valid))." : "Workout \(id) already had that name."
        )
    }
}

/// A one-line progress bar on standard error, only when it is a terminal.
final class ProgressBar {
    let label: String
    private var lastPercent = -1

    init?(label: String) {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        self.label = label
    }

    func show(_ fraction: Double) {
        let percent = Int(fraction * 100)
        guard percent != lastPercent else { return }
        lastPercent = percent
        let filled = percent * 30 / 100
        printErrorInline(
            "\r\(label) [" + String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
                + "] \(percent)%")
    }

    /// Erases the bar (before other lines are printed, and at the end); the next `show` draws it again.
    func finish() {
        if lastPercent >= 0 { printErrorInline("\r" + String(repeating: " ", count: label.count + 40) + "\r") }
        lastPercent = -1
    }

    private func printErrorInline(_ text: String) {
        StandardStream.error.write(text)
    }
}
