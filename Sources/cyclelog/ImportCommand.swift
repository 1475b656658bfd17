import ArgumentParser
import Concurrency
import ExitStatus
import Foundation
import ProgramMain
import Recording
import WorkoutStore
import Workouts

struct ImportRides: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Imports rides recorded by bike computers from FIT activity files.",
        discussion: """
            Power, cadence, speed, heart rate and distance come from the file's records, pauses from its timer \
            events, laps from its lap messages; elapsed and timer time, distance and work are kept as the device \
            wrote them. A folder imports every .fit file in it. Importing a file again finds the ride already \
            stored. A damaged or cut-short file is refused whole, with the byte where it goes wrong.
            """)

    @Argument(help: "FIT activity files, or folders of them.")
    var paths: [String]

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Print each workout's summary as JSON (keys described in the replay guide), one object per line.")
    var json = false

    @OptionGroup var undeleting: UndeleteOption

    func run() async throws {
        Stages.mark("parsed")
        let (files, folderErrors) = files()
        // The first file is read while the database opens, and each next one while the one before is stored.
        async let opened = database.open()
        var next = files.first.map(FITImporter.read)
        Stages.mark("file-read")
        let store = try await opened
        Stages.mark("database-open")
        var importer = FITImporter(store: store)
        importer.refreshesFTP = false
        importer.rules.undelete = undeleting.undelete
        for problem in folderErrors { printError("cyclelog: \(problem)") }
        var failed: ExitStatus? = folderErrors.isEmpty ? nil : .failed
        var imported = false
        var tally = ImportTally()
        // Many files on a terminal: a bar on standard error, erased whenever a file's line is printed.
        let progress = files.count > 1 ? ProgressBar(label: "importing \(files.count) files") : nil
        for index in files.indices {
            guard let file = next else { break }
            async let following = index + 1 < files.count ? FITImporter.read(files[index + 1]) : nil
            defer { progress?.show(Double(index + 1) / Double(files.count)) }
            do {
                let outcomes = try importer.store(file)
                Stages.mark("stored")
                progress?.finish()
                for outcome in outcomes {
                    tally.count(outcome)
                    imported = imported || !outcome.alreadyStored
                    for problem in outcome.problems { printError("warning: \(problem)") }
                    if json {
                        sayOnStandardOutput(outcome.summary.json.rendered())
                    } else {
                        sayOnStandardOutput(
                            "\(file.name): \(outcome.alreadyStored ? "already stored as" : "imported as") "
                                + line(outcome.summary))
                    }
                    if !outcome.alreadyStored, let notice = OverlapText.notice(after: outcome.summary.id, in: store) {
                        printError(notice)
                    }
                }
            } catch {
                progress?.finish()
                tally.refused(error)
                printError("cyclelog: \(error)")
                failed = ExitStatus.worst(failed, error)
            }
            next = await following
        }
        progress?.finish()
        if files.count > 1 {
            if json {
                printError(tally.text(files: files.count))
            } else {
                sayOnStandardOutput(tally.text(files: files.count))
            }
        }
        Stages.mark("printed")
        if imported { try store.refreshFTPEstimates() }
        Stages.mark("ftp-history")
        if let failed { throw failed.saidAlready }
    }

    /// The files named, with each folder replaced by the .fit files in it, in name order. A folder that cannot be
    /// listed or holds no .fit file is an error of its own: importing nothing must not look like success.
    private func files() -> (files: [String], folderErrors: [String]) {
        var files: [String] = []
        var folderErrors: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
                files.append(path)
                continue
            }
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: path)
            } catch {
                folderErrors.append("\(path): the folder cannot be listed (\(error.localizedDescription))")
                continue
            }
            let found = names.filter { $0.lowercased().hasSuffix(".fit") }.sorted()
            if found.isEmpty { folderErrors.append("\(path): the folder holds no .fit file") }
            files += found.map { (path as NSString).appendingPathComponent($0) }
        }
        return (files, folderErrors)
    }

    private func line(_ summary: WorkoutSummary) -> String {
        let statistics = summary.statistics
        var parts = [
            "workout \(summary.id)", SummaryText.dateTime(summary.startMicroseconds),
            SummaryText.duration(statistics.elapsedSeconds),
            SummaryText.fixed(statistics.distanceMeters / 1000, 2) + " km",
        ]
        if let watts = statistics.averagePowerWatts { parts.append("\(Int(watts.rounded())) W") }
        return parts.joined(separator: ", ")
    }
}

/// What an import of many files came to: rides imported and already stored, files refused by reason.
struct ImportTally {
    var imported = 0
    var alreadyStored = 0
    /// Refused files by reason, in the order the reasons first came.
    var refusals: [(reason: String, files: Int)] = []

    mutating func count(_ outcome: Replayer.Outcome) {
        if outcome.alreadyStored { alreadyStored += 1 } else { imported += 1 }
    }

    mutating func refused(_ error: Error) {
        let reason = Self.reason(error)
        if let index = refusals.firstIndex(where: { $0.reason == reason }) {
            refusals[index].files += 1
        } else {
            refusals.append((reason, 1))
        }
    }

    static func reason(_ error: Error) -> String {
        guard let error = error as? ReplayError else { return "other" }
        switch error.code {
        case .unreadable: return "could not be read"
        case .notARide: return "damaged or not a ride"
        case .inconsistentTimes: return "times that go back or leap"
        case .busy: return "being stored by another cyclelog"
        case .nothingToRebuild, .unexpectedRide: return "other"
        case .store:
            return error.storeCode == .deleted
                ? "deleted before (--undelete stores them again)" : "refused by the database"
        }
    }

    func text(files: Int) -> String {
        let refusedFiles = refusals.map(\.files).reduce(0, +)
        return "\(SummaryText.count(files, "file", "files")): "
            + "\(SummaryText.count(imported, "ride", "rides")) imported, \(alreadyStored) already stored, "
            + "\(refusedFiles) refused"
            + (refusals.isEmpty ? "" : " (" + refusals.map { "\($0.files) \($0.reason)" }.joined(separator: ", ") + ")")
    }
}
