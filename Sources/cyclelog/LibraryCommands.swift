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
                print(entry.json.rendered())
            } else {
                print(
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
                    print("\(id)  \(ShownText.cut(workout.name, to: 60))  \(workout.steps.count) steps  from \(name)")
                case .alreadyThere(let id):
                    print("\(id)  already in the library (the same steps as \(name))")
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
    @Flag(help: "The workout's canonical text (what a ride's journal carries).")
    var text = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        guard let entry = try database.open(.read).libraryWorkout(id) else {
            throw CommandFailure("no workout '\(ShownText.cut(id, to: 40))' (cyclelog workouts list)", .cannotUse)
        }
        if text {
            print(WorkoutText.text(entry.workout), terminator: "")
            return
        }
        let workout = entry.workout
        print("\(workout.name)  \(entry.durationText)  \(workout.steps.count) steps")
        if let author = workout.author { print("by \(author)") }
        if let description = workout.description { print(description) }
        var start = 0
        for (index, step) in workout.steps.enumerated() {
            var words = [
                String(format: "%3d", index + 1), String(format: "%8@", clock(start) as NSString),
                step.intensity.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0),
                WorkoutText.lengthText(step.length).padding(toLength: 7, withPad: " ", startingAt: 0),
                power(step.power),
            ]
            if let cadence = step.cadence { words.append("\(cadence.lowerBound)–\(cadence.upperBound) rpm") }
            if let heartRate = step.heartRate { words.append("\(heartRate.lowerBound)–\(heartRate.upperBound) bpm") }
            if let grade = step.gradeHundredths { words.append("\(PowerLevel.decimal(grade)) % grade") }
            if step.scored { words.append("(scored)") }
            if let name = step.name { words.append(ShownText.cut(name, to: 40)) }
            print(words.joined(separator: "  "))
            for text in step.texts {
                print("       +\(clock(text.offsetSeconds))  \(ShownText.cut(text.text, to: 70))")
            }
            if case .seconds(let seconds) = step.length { start += seconds }
        }
    }

    func clock(_ seconds: Int) -> String { String(format: "%d:%02d", seconds / 60, seconds % 60) }

    func power(_ target: PowerTarget) -> String {
        let text = WorkoutText.powerText(target)
        guard let ftp else { return text }
        let player = WorkoutPlayer(PlannedWorkout(StructuredWorkout(name: "", steps: []), ftpWatts: ftp))
        switch target {
        case .free, .maxEffort: return text
        case .steady: return "\(player.watts(target, progress: 0) ?? 0) W"
        case .range(let low, let high):
            return "\(player.watts(.steady(low), progress: 0) ?? 0)–\(player.watts(.steady(high), progress: 0) ?? 0) W"
        case .ramp:
            return "\(player.watts(target, progress: 0) ?? 0) → \(player.watts(target, progress: 1) ?? 0) W"
        }
    }
}

struct RemoveWorkout: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Removes an imported workout.")
    @Argument var id: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        guard try database.open().removeLibraryWorkout(id) else {
            throw CommandFailure("no imported workout '\(ShownText.cut(id, to: 40))'", .cannotUse)
        }
        print("removed \(id)")
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
            throw CommandFailure("no workout '\(ShownText.cut(id, to: 40))' (cyclelog workouts list)", .cannotUse)
        }
        let bytes: [UInt8]
        switch WorkoutFormat(fileName: output) {
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
        print("wrote \(output)")
    }
}
