import ArgumentParser
import ExitStatus
import Formats
import Foundation
import StructuredWorkouts
import WorkoutFiles
import WorkoutStore

/// `cyclelog workouts`: the library of structured workouts (built in, and imported from .zwo, .erg, .mrc and FIT
/// workout files) that `record --workout` rides.
struct LibraryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "Imports, lists, shows, removes and exports structured workouts.",
        discussion: """
            Built in: ramp-test, ftp-test-20, sweet-spot-2x20, vo2max-5x5, threshold-3x10, endurance-1h, \
            hill-repeats, recovery. \
            `cyclelog record --workout ID` rides one.
            """,
        subcommands: [
            ListWorkouts.self, ImportWorkouts.self, ShowWorkout.self, RemoveWorkout.self, ExportWorkout.self,
        ],
        defaultSubcommand: ListWorkouts.self)
}

extension LibraryWorkout {
    /// `1:05:00`, or `open` when a step is not timed.
    var durationText: String { workout.totalSeconds.map { SummaryText.duration(Double($0)) } ?? "open" }

    var json: JSONValue {
        let duration: JSONValue = workout.totalSeconds.map { .integer(Int64($0)) } ?? .null
        let fields: [(String, JSONValue)] = [
            ("id", .string(id)), ("name", .string(workout.name)), ("source", .string(source)),
            ("fileName", .optionalString(fileName)), ("steps", .integer(Int64(workout.steps.count))),
            ("durationSeconds", duration), ("needsFTP", .bool(workout.needsFTP)),
            ("contentDigest", .string(contentDigest)),
        ]
        return .object(fields)
    }
}

struct ListWorkouts: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Lists the workouts.")
    @Flag(
        help:
            "One JSON object per workout: id, name, source, fileName, steps, durationSeconds, needsFTP, contentDigest.")
    var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let listing = try database.open(.read).libraryWorkouts()
        for entry in listing.workouts {
            if json {
                sayOnStandardOutput(entry.json.rendered())
            } else {
                sayOnStandardOutput(
                    "\(entry.id)  \(ShownText.cut(entry.workout.name, to: 60))  \(entry.durationText)  "
                        + "\(entry.workout.steps.count) steps  \(entry.source)")
            }
        }
        // A row that cannot be read is said, and hides none of the others.
        for entry in listing.unreadable { printError("cyclelog: \(ShownText.cut(entry.reason, to: 300))") }
    }
}

struct ImportWorkouts: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Imports workout files (.zwo, .erg, .mrc, FIT workouts); a folder imports every one in it.",
        discussion: """
            A file that cannot be read is refused whole with the line, element or byte and why; the others are \
            still imported. The same workout is kept once.
            """)
    @Argument(help: "Workout files or folders.")
    var paths: [String]
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw CommandFailure("\(path): no such file or folder", .cannotUse)
            }
            if isFolder.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                let found = names.sorted().filter { WorkoutFormat(fileName: $0) != nil }.map { path + "/" + $0 }
                guard !found.isEmpty else {
                    throw CommandFailure(
                        "\(path): no workout files in this folder (.zwo, .erg, .mrc or .fit); nothing was imported",
                        .failed)
                }
                files += found
            } else {
                files.append(path)
            }
        }
        let store = try database.open()
        var refused = 0
        for file in files {
            guard let format = WorkoutFormat(fileName: file) else {
                printError("cyclelog: \(file): not a workout file (.zwo, .erg, .mrc or .fit); nothing was imported")
                refused += 1
                continue
            }
            // A file too large to be a workout is refused before it is read.
            let size = ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.intValue ?? 0
            do throws(WorkoutReadError) {
                try WorkoutFormat.checkSize(size)
            } catch {
                printError("cyclelog: \(file): \(error); nothing was imported")
                refused += 1
                continue
            }
            guard let data = FileManager.default.contents(atPath: file) else {
                printError("cyclelog: \(file): cannot be read; nothing was imported")
                refused += 1
                continue
            }
            let bytes = Array(data)
            do {
                let workout = try format.read(bytes, fileName: file)
                let name = (file as NSString).lastPathComponent
                switch try store.importWorkout(
                    workout, format: format.rawValue, fileName: name, sourceBytes: bytes, at: Self.nowMicroseconds())
                {
                case .added(let id):
                    sayOnStandardOutput(
                        "\(id)  \(ShownText.cut(workout.name, to: 60))  \(workout.steps.count) steps  from \(name)")
                case .alreadyThere(let id):
                    sayOnStandardOutput("\(id)  already in the library (the same steps as \(name))")
                }
            } catch let error as WorkoutReadError {
                printError("cyclelog: \(file): \(error); nothing was imported")
                refused += 1
            } catch let error as StoreError where error.code == .conflict {
                printError("cyclelog: \(file): \(error.description)")
                refused += 1
            }
        }
        if refused > 0 {
            throw CommandFailure("\(refused) of \(files.count) files refused", .failed)
        }
    }

    static func nowMicroseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }
}

struct ShowWorkout: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Shows a workout's steps.")
    @Argument(help: "The workout's id (`cyclelog workouts list`).")
    var id: String
    @Option(help: "Show shares of FTP as watts for this FTP.")
    var ftp: Int?
    @Flag(help: "The workout's canonical text (what a ride's journal carries; Docs/reference/workout-text.md).")
    var text = false
    @Flag(help: "The workout as JSON: its library entry and every step (Docs/reference/workout-text.md).")
    var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        guard let entry = try database.open(.read).libraryWorkout(id) else {
            throw CommandFailure(UnknownWorkout(id: id).description, .failed)
        }
        if text {
            sayOnStandardOutput(WorkoutText.text(entry.workout), terminator: "")
            return
        }
        let workout = entry.workout
        if json {
            guard case .object(let members) = workout.json else { return }
            let fields: [(String, JSONValue)] = [
                ("id", .string(entry.id)), ("source", .string(entry.source)),
                ("fileName", .optionalString(entry.fileName)), ("contentDigest", .string(entry.contentDigest)),
            ]
            sayOnStandardOutput(JSONValue.object(fields + members).rendered())
            return
        }
        sayOnStandardOutput(
            "\(ShownText.visible(workout.name))  \(entry.durationText)  \(SummaryText.count(workout.steps.count, "step", "steps"))"
        )
        if let author = workout.author { sayOnStandardOutput("by \(ShownText.visible(author))") }
        if let description = workout.description { sayOnStandardOutput(ShownText.visible(description)) }
        var rows = [["#", "start", "kind", "length", "power", "also"]]
        var messages: [Int: [String]] = [:]
        var start = 0
        for (index, step) in workout.steps.enumerated() {
            var also: [String] = []
            if let cadence = step.cadence { also.append(Self.range(cadence) + " rpm") }
            if let heartRate = step.heartRate { also.append(Self.range(heartRate) + " bpm") }
            if let grade = step.gradeHundredths { also.append("\(PowerLevel.decimal(grade)) % grade") }
            if step.scored { also.append("scored") }
            if let name = step.name { also.append("\"" + ShownText.cut(ShownText.visible(name), to: 40) + "\"") }
            rows.append([
                "\(index + 1)", SummaryText.duration(Double(start)), step.intensity.rawValue, Self.length(step.length),
                power(step.power), also.joined(separator: ", "),
            ])
            messages[index + 1] = step.texts.map {
                "+\(SummaryText.duration(Double($0.offsetSeconds)))  \(ShownText.cut(ShownText.visible($0.text), to: 70))"
            }
            if case .seconds(let seconds) = step.length { start += seconds }
        }
        // Columns as wide as their widest cell: numbers and times to the right, words to the left.
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for (number, row) in rows.enumerated() {
            let cells = row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column < 2 ? pad + cell : cell + pad
            }
            sayOnStandardOutput(("  " + cells.joined(separator: "  ")).withoutTrailingSpaces)
            for message in messages[number] ?? [] {
                sayOnStandardOutput(String(repeating: " ", count: widths[0] + 4) + message)
            }
        }
    }

    /// `10:00`, `1:00:00`, `5 km`, `800 m`, `open`.
    static func length(_ length: WorkoutStep.Length) -> String {
        switch length {
        case .seconds(let seconds): SummaryText.duration(Double(seconds))
        case .meters(let meters):
            meters >= 1000 && meters % 100 == 0 ? "\(PowerLevel.decimal(meters / 10)) km" : "\(meters) m"
        case .open: "open"
        }
    }

    /// `85–95` (one value alone when both ends are one).
    static func range(_ range: ClosedRange<Int>) -> String {
        range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)–\(range.upperBound)"
    }

    /// One form for every target: `75 %`, `250 W`, `88–94 %`, `50 → 75 %`, `free`, `max effort`; watts for an FTP
    /// given with `--ftp`.
    func power(_ target: PowerTarget) -> String {
        func level(_ level: PowerLevel) -> (number: String, unit: String) {
            if level.unit == .ftp, let ftp {
                let player = WorkoutPlayer(PlannedWorkout(StructuredWorkout(name: "", steps: []), ftpWatts: ftp))
                return ("\(player.watts(.steady(level), progress: 0) ?? 0)", "W")
            }
            return (PowerLevel.decimal(level.hundredths), level.unit == .ftp ? "%" : "W")
        }
        switch target {
        case .free: return "free"
        case .maxEffort: return "max effort"
        case .steady(let one):
            let shown = level(one)
            return "\(shown.number) \(shown.unit)"
        case .range(let low, let high):
            let (a, b) = (level(low), level(high))
            return a.unit == b.unit
                ? "\(a.number)–\(b.number) \(a.unit)" : "\(a.number) \(a.unit)–\(b.number) \(b.unit)"
        case .ramp(let from, let to):
            let (a, b) = (level(from), level(to))
            return a.unit == b.unit
                ? "\(a.number) → \(b.number) \(a.unit)" : "\(a.number) \(a.unit) → \(b.number) \(b.unit)"
        }
    }
}

extension String {
    fileprivate var withoutTrailingSpaces: String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}

struct RemoveWorkout: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Removes an imported workout.")
    @Argument var id: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        guard try database.open().removeLibraryWorkout(id) else {
            throw CommandFailure(UnknownWorkout(id: id).description, .failed)
        }
        sayOnStandardOutput("removed \(id)")
    }
}

struct ExportWorkout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Writes a workout as a .zwo or FIT workout file.",
        discussion: """
            The format is the output's extension. A .zwo holds shares of FTP and timed steps only; FIT holds no \
            ramp (written as the range it spans) and one message per step.
            """)
    @Argument var id: String
    @Option(name: .shortAndLong, help: "The file to write: NAME.zwo or NAME.fit.")
    var output: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        guard let entry = try database.open(.read).libraryWorkout(id) else {
            throw CommandFailure(UnknownWorkout(id: id).description, .failed)
        }
        let format = WorkoutFormat(fileName: output)
        let bytes: [UInt8]
        switch format {
        case .zwo?:
            do {
                bytes = try ZWOFile.write(entry.workout)
            } catch {
                throw CommandFailure("\(id) cannot be written as a .zwo file: \(error)", .cannotUse)
            }
        case .fit?:
            bytes = FITWorkoutFile.write(entry.workout, createdMicroseconds: ImportWorkouts.nowMicroseconds())
        default:
            throw CommandFailure("\(output): the output's name ends in .zwo or .fit", .usage)
        }
        try OutputFile.write(bytes, to: output)
        sayOnStandardOutput("wrote \(output)")
        // What the format could not hold, said rather than dropped silently.
        let losses = format?.losses(entry.workout) ?? []
        if !losses.isEmpty {
            printError("cyclelog: \(output) leaves out what its format cannot hold: " + losses.joined(separator: "; "))
        }
    }
}
