import ArgumentParser
import ExitStatus
import Formats
import Foundation
import RideHistory
import WorkoutStore
import Workouts

struct ExportRides: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Writes stored rides as FIT (default), TCX or CSV files for Strava, intervals.icu and the like.",
        discussion: """
            With -o FILE ending in .fit, .tcx or .csv one workout goes into that file (its ending chooses the format \
            when --format is not given); -o - writes one workout to standard output; otherwise each ride goes \
            into a folder (-o DIR, made when missing; default the current one) as cyclelog-<id>-<date>.<format>. \
            --since DATE exports every complete ride that started on or after DATE (YYYY-MM-DD or a full UTC time).
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case fit, tcx, csv

        var export: RideExport.Format {
            switch self {
            case .fit: .fit
            case .tcx: .tcx
            case .csv: .csv
            }
        }
    }

    @Argument(help: "Workouts: ids from `cyclelog list`, or `last`.")
    var workouts: [String] = []

    @Option(help: "fit (the default), tcx or csv.")
    var format: Format?

    @Option(name: .shortAndLong, help: "A file (one workout) or a folder.")
    var output: String?

    @Option(help: "Export every complete ride that started on or after this date.")
    var since: String?

    @OptionGroup var database: DatabaseOptions

    /// The ending of `-o FILE` when it names one of the formats.
    private var outputEnding: Format? {
        guard let output else { return nil }
        return Format.allCases.first { output.lowercased().hasSuffix(".\($0.rawValue)") }
    }

    /// --format, else the ending of -o, else FIT.
    private var chosenFormat: Format { format ?? outputEnding ?? .fit }

    func validate() throws {
        if workouts.isEmpty && since == nil { throw ValidationError("name the workouts to export, or use --since") }
        if let format, let ending = outputEnding, ending != format {
            throw ValidationError(
                "-o \(output ?? "") ends in .\(ending.rawValue) but --format is \(format.rawValue): give one or the other"
            )
        }
        if let since, UTCTime.parseDate(since) == nil {
            throw ValidationError("--since takes a date (2024-05-01) or a UTC time (2024-05-01T06:30:00Z)")
        }
        // A name with another file's ending (out.gpx) is a file asked for in a format cyclelog does not write, not
        // a folder to make.
        if let output, outputEnding == nil, !FileManager.default.fileExists(atPath: output) {
            let name = (output as NSString).lastPathComponent
            let ending = (name as NSString).pathExtension
            if !ending.isEmpty, ending.count <= 5, ending.allSatisfy(\.isLetter) {
                throw ValidationError(
                    "-o \(output): cyclelog writes .fit, .tcx and .csv files, not .\(ending); or name a folder without "
                        + "an ending")
            }
        }
    }

    func run() throws {
        let store = try database.openRides()
        var ids = try workouts.map { try WorkoutReference.resolve($0, in: store) }
        if let since, let from = UTCTime.parseDate(since) {
            ids += try RideExport.rides(since: from, in: store)
        }
        var seen = Set<Int64>()
        ids = ids.filter { seen.insert($0).inserted }
        guard !ids.isEmpty else {
            sayOnStandardOutput("No complete rides since \(since ?? "then"); nothing exported.")
            return
        }
        // `-` or a path ending in the format's extension is a file (one workout only); anything else is a folder.
        let format = chosenFormat
        let file = output.flatMap {
            $0 == "-" || outputEnding != nil || OutputFile.isExistingNonFolder($0) ? $0 : nil
        }
        if file != nil && ids.count > 1 {
            throw CommandFailure(
                "\(ids.count) workouts do not fit in one file: give a folder with -o")
        }
        if file == nil, let output {
            do {
                try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure("cannot make the folder \(output): \(error.localizedDescription)")
            }
        }
        for id in ids {
            let ride = try WorkoutReference.ride(id, in: store, analysed: false)
            let bytes = try RideExport.file(ride, format: format.export, from: store)
            for part in ride.damaged { printError("cyclelog: warning: \(part) (left out as a gap)") }
            let name = RideExport.fileName(ride.summary, format: format.export)
            let path = file ?? URL(fileURLWithPath: output ?? ".").appendingPathComponent(name).path
            try OutputFile.write(bytes, to: path)
            if path != "-" { sayOnStandardOutput("workout \(id) → \(path)") }
        }
    }
}
