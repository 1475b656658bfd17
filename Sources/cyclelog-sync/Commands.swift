import ArgumentParser
import ExitStatus
import Formats
import Foundation
import ProgramMain
import RideSync
import RideUploads
import WorkoutStore
import Workouts

/// A command of `cyclelog-sync`. What it throws ends the program in words with its status (a `SyncError`: 1, 2
/// or 75; ProgramMain).
protocol SyncCommand: AsyncParsableCommand {
    func perform() async throws
}

extension SyncCommand {
    func run() async throws {
        try await perform()
    }
}

/// `cyclelog-sync` alone: push, then pull; then, with accounts, the uploads and the coach's plan.
struct SyncNow: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Pushes the rides recorded here, pulls this rider's other rides, then uploads and fetches the plan.",
        discussion: """
            With an intervals.icu or Strava account (`cyclelog-sync account add`), the rides that wait are \
            uploaded after the push, and today's planned workouts are fetched from intervals.icu, even when the \
            shared store cannot be reached.
            """)
    @OptionGroup var places: Places

    @Flag(help: "When the server cannot be reached, try again after 1, 2, 4 … 300 s until it can.")
    var keepTrying = false

    @Flag(help: "No shared PostgreSQL: only the uploads and the coach's plan.")
    var uploadsOnly = false

    func perform() async throws {
        var failure: (any Error)?
        if !uploadsOnly {
            do {
                try await sharedStore()
            } catch let error as SyncError where error.exitStatus == .tryLater {
                // The uploads go on without the shared store; the run still ends with 75 for the timer.
                FileHandle.standardError.write(Data("cyclelog-sync: \(shown(error.description))\n".utf8))
                failure = error
            } catch {
                failure = error
                if (error as? ExitCode) == nil { throw error }
            }
        }
        try await uploads()
        if let failure { throw failure }
    }

    /// Push, then pull (with `--keep-trying`, until the server can be reached).
    private func sharedStore() async throws {
        while true {
            do {
                let (pushed, pulled) = try await places.withSynchronizer { sync throws(SyncError) in
                    try await sync.sync()
                }
                printPush(pushed)
                printPull(pulled)
                // A ride refused or skipped is reported, after the others went.
                if pushed.contains(where: { $0.result == .refused })
                    || pulled.contains(where: { $0.result == .skipped })
                {
                    throw ExitStatus.failed.saidAlready
                }
                return
            } catch let failure as SyncError {
                guard keepTrying, failure.exitStatus == .tryLater else { throw failure }
                let failures = (try? places.openLocal().syncHistory().failuresInARow) ?? 1
                let seconds = Backoff.seconds(afterFailures: failures)
                FileHandle.standardError.write(
                    Data("cyclelog-sync: \(shown(failure.description)); again in \(seconds) s\n".utf8))
                try await Task.sleep(for: .seconds(seconds))
            }
        }
    }

    /// The uploads that wait and the coach's plan, for the accounts there are.
    private func uploads() async throws {
        let folder = places.folder
        let services = folder.services()
        guard !services.isEmpty else {
            if uploadsOnly { print("No accounts to upload to (`cyclelog-sync account add intervals|strava`).") }
            return
        }
        let store = try places.openLocal()
        var reach = ServiceReach()
        reach.policy.replySeconds = places.replyTimeout
        var uploader = Uploader(store: store, folder: folder)
        uploader.reach = reach
        var report = try await uploader.run(services, choice: .automatic)
        if services.contains(.intervals) {
            var plans = CoachPlans(store: store, folder: folder)
            plans.reach = reach
            do {
                printPlans(try await plans.fetch(days: 7))
            } catch let failure as UploadError {
                report.failures.append(failure)
            }
        }
        try conclude(report)
    }
}

struct Init: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Creates the shared store's schema, or brings it up to date.")
    @OptionGroup var places: Places

    func perform() async throws {
        let address = try places.address()
        let applied = try await SharedStore.with(address, replySeconds: places.replyTimeout) {
            server throws(SyncError) in
            try await Synchronizer.initialize(server)
        }
        print(
            applied.isEmpty
                ? "The shared store's schema is up to date."
                : applied.map { "Applied \($0)." }.joined(separator: "\n"))
    }
}

struct Push: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Sends the rides recorded here that the shared store lacks at their version.")
    @OptionGroup var places: Places

    @Flag(help: "Lists what would be sent; nothing is.")
    var dryRun = false

    func perform() async throws {
        let report: [Synchronizer.Pushed]
        if dryRun {
            report = try Synchronizer.pending(in: places.openLocal())
        } else {
            report = try await places.withSynchronizer { sync throws(SyncError) in try await sync.push() }
        }
        printPush(report)
        if report.contains(where: { $0.result == .refused }) { throw ExitStatus.failed.saidAlready }
    }
}

struct Pull: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull", abstract: "Brings this rider's rides recorded elsewhere, newer versions and deletions.")
    @OptionGroup var places: Places

    func perform() async throws {
        let report = try await places.withSynchronizer { sync throws(SyncError) in try await sync.pull() }
        printPull(report)
        if report.contains(where: { $0.result == .skipped }) { throw ExitStatus.failed.saidAlready }
    }
}

struct Status: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "What is waiting to be pushed, and how the last syncs went (no server needed)."
    )
    @OptionGroup var places: Places

    @Flag(help: "Prints the status as JSON.")
    var json = false

    func perform() async throws {
        let local = try places.openLocal()
        let pending = try local.pendingRides()
        let tombstones = try local.tombstones(pendingOnly: true)
        let unfinished = try local.unfinishedCount()
        let history = try local.syncHistory()
        let rider = try local.rider()
        if json {
            let uploads = try UploadStatus.of(local, places.folder)
            let time = { (microseconds: Int64?) in
                JSONValue.optionalString(microseconds.map { UTCTime.formatSeconds(microseconds: $0) })
            }
            let pendingRides = pending.map { ride -> JSONValue in
                .object([
                    ("id", .integer(ride.id)), ("syncIdentifier", .string(ride.syncIdentifier)),
                    ("version", .integer(Int64(ride.version))),
                ])
            }
            let pendingDeletions = tombstones.map { tombstone -> JSONValue in
                .object([
                    ("syncIdentifier", .string(tombstone.syncIdentifier)),
                    ("version", .integer(Int64(tombstone.version))),
                ])
            }
            let status: JSONValue = .object([
                ("rider", .string(rider.name)), ("riderUUID", .string(rider.uuid)),
                ("collector", .string(rider.collectorName)), ("collectorUUID", .string(rider.collectorUUID)),
                ("pendingRides", .array(pendingRides)), ("pendingDeletions", .array(pendingDeletions)),
                ("unfinishedRides", .integer(Int64(unfinished))),
                ("lastSuccess", time(history.lastSuccessMicroseconds)),
                ("lastFailure", time(history.lastFailureMicroseconds)),
                ("lastFailureReason", .optionalString(history.lastFailure)),
                ("failuresInARow", .integer(Int64(history.failuresInARow))),
                ("uploads", .array(uploads.map(uploadJSON))),
            ])
            print(status.rendered())
            return
        }
        print("Rider \(shown(rider.name)) (\(rider.uuid)), collector \(shown(rider.collectorName)).")
        print(
            "Waiting to be pushed: \(pending.count) ride\(pending.count == 1 ? "" : "s"), \(tombstones.count) "
                + "deletion\(tombstones.count == 1 ? "" : "s")"
                + (unfinished > 0 ? "; \(unfinished) being recorded or unfinished (pushed once saved)" : "") + ".")
        print(
            "Last successful sync: "
                + "\(history.lastSuccessMicroseconds.map { UTCTime.formatSeconds(microseconds: $0) } ?? "never").")
        if let failure = history.lastFailure, let time = history.lastFailureMicroseconds,
            time > history.lastSuccessMicroseconds ?? .min
        {
            print(
                "Last failure, \(UTCTime.formatSeconds(microseconds: time)) (\(history.failuresInARow) in a row): "
                    + shown(failure))
        }
        printUploadsWaiting(try UploadStatus.summaries(local, places.folder))
    }
}

struct Conflicts: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "Lists versions pushed with content other than the shared store's.")
    @OptionGroup var places: Places

    func perform() async throws {
        let conflicts = try await places.withSynchronizer { sync throws(SyncError) in try await sync.conflicts() }
        if conflicts.isEmpty { print("No conflicts.") }
        for conflict in conflicts {
            print(
                "\(conflict.id): ride \(conflict.syncIdentifier) version \(conflict.version) from \(shown(conflict.collector)) "
                    + "(\(conflict.incomingDigest?.prefix(12) ?? "deleted")) against the store's version "
                    + "\(conflict.serverVersion) from \(shown(conflict.serverCollector)) "
                    + "(\(conflict.serverDigest?.prefix(12) ?? "deleted")); "
                    + "`cyclelog-sync resolve \(conflict.id) --keep server|local`")
        }
    }
}

struct Resolve: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve", abstract: "Settles a conflict: keeps the shared store's copy or this one.")
    @OptionGroup var places: Places

    @Argument(help: "The conflict's number, from `cyclelog-sync conflicts`.")
    var conflict: Int64

    @Option(help: "server: store the shared store's copy here; local: push this copy as the next version.")
    var keep: Synchronizer.Keep

    func perform() async throws {
        let settled = try await places.withSynchronizer { sync throws(SyncError) in
            try await sync.resolve(conflict, keep: keep)
        }
        print(shown(settled))
    }
}

extension Synchronizer.Keep: ExpressibleByArgument {}

struct Duplicates: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "duplicates", abstract: "Lists this rider's rides from two collectors that overlap in time.")
    @OptionGroup var places: Places

    func perform() async throws {
        let pairs = try await places.withSynchronizer { sync throws(SyncError) in try await sync.duplicates() }
        if pairs.isEmpty { print("No overlapping rides.") }
        for pair in pairs {
            print(
                "\(pair.first) (\(shown(pair.firstCollector))) and \(pair.second) (\(shown(pair.secondCollector))) "
                    + "overlap by "
                    + "\(Int(pair.overlapSeconds.rounded())) s; nothing is merged: `cyclelog delete` the one to drop")
        }
    }
}

struct Join: SyncCommand {
    static let configuration = CommandConfiguration(
        commandName: "join", abstract: "Makes this machine's rides those of a rider already in the shared store.")
    @OptionGroup var places: Places

    @Argument(help: "The rider's name in the shared store.")
    var name: String

    func perform() async throws {
        let moved = try await places.withSynchronizer { sync throws(SyncError) in try await sync.join(name) }
        print("This machine's rides are now \(shown(name))'s (\(moved) to push as their next version).")
    }
}

func printPush(_ report: [Synchronizer.Pushed]) {
    if report.isEmpty { print("Nothing to push.") }
    for ride in report {
        let what = ride.id.map { "workout \($0)" } ?? "deletion"
        let words: String
        switch ride.result {
        case .pending: words = "would be pushed"
        case .inserted: words = "pushed (new to the shared store)"
        case .replaced: words = "pushed (replaced an older version)"
        case .unchanged: words = "already in the shared store"
        case .conflict:
            words = "CONFLICT: the shared store has other content at this version (`cyclelog-sync conflicts`)"
        case .stale: words = "not pushed: the shared store has a newer version or deleted it (`cyclelog-sync pull`)"
        case .refused: words = "REFUSED: \(shown(ride.reason ?? ""))"
        }
        print("\(what) \(ride.syncIdentifier) v\(ride.version): \(words)")
    }
}

func printPull(_ report: [Synchronizer.Pulled]) {
    if report.isEmpty { print("Nothing to pull.") }
    for ride in report {
        let words: String
        switch ride.result {
        case .stored: words = "stored as workout \(ride.id ?? 0)"
        case .deleted: words = "deleted here, as in the shared store"
        case .acknowledged: words = "already here"
        case .skipped: words = "SKIPPED"
        }
        print("ride \(ride.syncIdentifier) v\(ride.version): \(words)" + (ride.problem.map { " (\(shown($0)))" } ?? ""))
    }
}

/// One ride on one service in `status --json`.
func uploadJSON(_ status: UploadStatus) -> JSONValue {
    .object([
        ("service", .string(status.service.rawValue)), ("id", .integer(status.rideId)),
        ("syncIdentifier", .string(status.syncIdentifier)), ("version", .integer(Int64(status.version))),
        ("remoteId", .optionalString(status.remoteId)), ("waiting", .bool(status.waiting)),
        ("refused", .bool(status.refused)),
        ("state", .string(status.words)), ("lastError", .optionalString(status.lastError)),
    ])
}

/// The uploads' lines of `status`: per service with an account, how many rides wait, each one with its last
/// error, and the rides the service refused.
func printUploadsWaiting(_ summaries: [UploadStatus.Summary]) {
    for summary in summaries {
        let waiting = summary.rides.filter(\.waiting)
        let rides = "\(waiting.count) ride\(waiting.count == 1 ? "" : "s")"
        print("Waiting to be uploaded to \(summary.service.title): \(rides).")
        for status in waiting {
            print(
                "  workout \(status.rideId) v\(status.version): \(shown(status.words))"
                    + (status.lastError.map { " (last error: \(shown($0)))" } ?? ""))
        }
        for status in summary.rides where status.refused {
            print("  workout \(status.rideId) v\(status.version): \(shown(status.words))")
        }
    }
}
