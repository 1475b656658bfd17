import ArgumentParser
import ExitStatus
import Formats
import Foundation
import ProgramMain
import RideUploads
import WorkoutStore

/// How the uploads' requests are timed, as every command that reaches a service takes it.
struct ServiceTiming: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "How long a service may take to answer one request before the answer counts as lost.",
            valueName: "seconds"))
    var replyTimeout = 60.0

    @Option(
        help: ArgumentHelp("The first wait before a request is tried again (doubled each time).", valueName: "seconds"))
    var backoff = 1.0

    func validate() throws {
        guard replyTimeout > 0, replyTimeout.isFinite, backoff >= 0, backoff.isFinite else {
            throw ValidationError("--reply-timeout takes seconds above 0, --backoff seconds from 0")
        }
    }

    var reach: ServiceReach {
        var reach = ServiceReach()
        reach.policy.replySeconds = replyTimeout
        reach.policy.firstBackoffSeconds = backoff
        reach.policy.longestBackoffSeconds = max(60 * backoff, backoff)
        return reach
    }
}

struct Upload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Uploads this collector's rides to intervals.icu and Strava, each ride once per service.",
        discussion: """
            Without a ride, uploads every ride that waits: the rides recorded here that started after the account \
            was added, and newer versions of rides uploaded before (intervals.icu replaces its activity; Strava \
            cannot replace a file, so its name and description are updated). A ride is found again by its external \
            id (its sync identifier and version), so a lost answer or a killed run never makes a second activity. \
            Exit 75: a service could not be reached or asked to wait; the sync's timer tries again.
            """)
    @OptionGroup var place: AccountPlace
    @OptionGroup var timing: ServiceTiming

    @Argument(help: "A workout id, or `last`; without it, every ride that waits.")
    var ride: String?

    @Option(
        help: ArgumentHelp("Every ride recorded here that started on or after this local day.", valueName: "YYYY-MM-DD")
    )
    var since: String?

    @Option(help: "One service only: intervals or strava.")
    var to: Service?

    @Flag(
        help: """
            Says how many rides each service has, and which wait or were refused; nothing is sent. With --all, \
            what became of every ride.
            """)
    var status = false

    @Flag(help: "With --status, every ride on every service, not only those that wait or were refused.")
    var all = false

    @Flag(help: "Also deletes the remote activities of rides deleted here (intervals.icu; Strava's API cannot).")
    var deleteRemote = false

    func validate() throws {
        if all && !status { throw ValidationError("--all goes with --status") }
    }

    func run() async throws {
        let store = try place.openLocal()
        let folder = place.folder
        if status {
            try printUploadStatus(store, folder, only: to, all: all)
            return
        }
        let services = to.map { [$0] } ?? folder.services()
        guard !services.isEmpty, services.allSatisfy(folder.services().contains) else {
            throw UploadError(
                "no \(to?.title ?? "intervals.icu or Strava") account here: "
                    + "`cyclelog-sync account add intervals|strava` first")
        }
        let choice: Uploader.Choice
        if let ride {
            if ride == "last" {
                guard let last = try store.newestUploadableRide() else {
                    throw UploadError("there is no complete ride recorded here")
                }
                choice = .rides([last.id])
            } else {
                guard let id = Int64(ride) else { throw ValidationError("a ride is a workout id or `last`") }
                choice = .rides([id])
            }
        } else if let since {
            guard since.count == 10, let start = Self.localMidnight(since) else {
                throw ValidationError("--since takes a day as YYYY-MM-DD")
            }
            choice = .rides(try store.uploadableRides(startedFrom: start, orUploadedTo: []).map(\.id))
        } else {
            choice = .automatic
        }
        var uploader = Uploader(store: store, folder: folder)
        uploader.reach = timing.reach
        let report = try await uploader.run(services, choice: choice, deleteRemote: deleteRemote)
        try conclude(report)
    }

    /// Midnight of a local day, in microseconds since 1970.
    static func localMidnight(_ day: String) -> Int64? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.date(from: day).map { Int64($0.timeIntervalSince1970 * 1_000_000) }
    }
}

/// Prints what a run did; ends with 75 when a service must be tried again later, 1 when one refused something.
/// Every service's failure is said, each in its words: the one that sets the exit status last, as the program's
/// error, the others before it.
func conclude(_ report: Uploader.Report) throws {
    printUploads(report)
    let deciding =
        report.failures.firstIndex(where: { $0.exitStatus != .tryLater }) ?? report.failures.indices.first
    for (index, failure) in report.failures.enumerated() where index != deciding {
        sayOnStandardError("cyclelog-sync: \(failure.description)")
    }
    if let deciding { throw report.failures[deciding] }
    if report.outcomes.contains(where: { $0.result == .refused }) { throw ExitStatus.failed.saidAlready }
}

func printUploads(_ report: Uploader.Report) {
    if report.outcomes.isEmpty && report.failures.isEmpty { print("Nothing to upload.") }
    for outcome in report.outcomes {
        let what = outcome.rideId.map { "workout \($0)" } ?? "deleted ride"
        print(
            "\(what) \(outcome.syncIdentifier) v\(outcome.version) → \(outcome.service.rawValue): \(shown(outcome.words))"
        )
    }
}

/// `upload --status`: what each service's files leave out, then either every ride (`all`) or, per service, how many
/// rides it has and the rides that wait or were refused (a decade of uploaded rides in one line).
func printUploadStatus(_ store: WorkoutStore, _ folder: AccountFolder, only: Service? = nil, all: Bool) throws {
    if folder.services().isEmpty { print("No accounts to upload to (`cyclelog-sync account add intervals|strava`).") }
    // What each service's files leave out, said before its rides.
    let leftOut = [(Service.intervals, try folder.intervals()?.without), (.strava, try folder.strava()?.without)]
    for (service, names) in leftOut where only == nil || only == service {
        let words = LeftOut.words(names)
        if !words.isEmpty { print("\(service.title): rides are sent \(words)") }
    }
    if all {
        for status in try UploadStatus.of(store, folder) where only == nil || status.service == only {
            printRideStatus(status)
        }
        return
    }
    for summary in try UploadStatus.summaries(store, folder) where only == nil || summary.service == only {
        func rides(_ count: Int, _ what: String) -> String { "\(count) ride\(count == 1 ? "" : "s") \(what)" }
        let (waiting, refused) = (summary.rides.count { $0.waiting }, summary.rides.count { $0.refused })
        // The uploaded always, the others when there are any.
        var counts = [rides(summary.rows[.uploaded] ?? 0, "uploaded")]
        if let deleted = summary.rows[.deleted], deleted > 0 { counts.append(rides(deleted, "deleted on request")) }
        if waiting > 0 { counts.append(rides(waiting, waiting == 1 ? "waits" : "wait")) }
        if refused > 0 { counts.append(rides(refused, "refused")) }
        print("\(summary.service.title): \(counts.joined(separator: ", ")) (`--all` lists every ride).")
        for status in summary.rides { printRideStatus(status) }
    }
}

/// One ride on one service, as `upload --status` names it.
private func printRideStatus(_ status: UploadStatus) {
    print(
        "workout \(status.rideId) v\(status.version) → \(status.service.rawValue): \(shown(status.words))"
            + (status.waiting && status.lastError != nil ? " (last error: \(shown(status.lastError ?? "")))" : ""))
}

struct Plans: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetches the coach's planned workouts from intervals.icu; today's becomes the first suggestion.",
        discussion: """
            Reads the calendar's workouts of the coming days (each as a .zwo file) into the workout library and \
            makes a suggested workout (preset plan-EVENT) of each, with the coach's description; today's comes \
            first on every screen. Suggestions of days gone by, or taken off the calendar, are removed.
            """)
    @OptionGroup var place: AccountPlace
    @OptionGroup var timing: ServiceTiming

    @Option(help: "How many days from today to fetch.")
    var days = 7

    func validate() throws {
        guard (1...60).contains(days) else { throw ValidationError("--days takes 1 to 60") }
    }

    func run() async throws {
        var plans = CoachPlans(store: try place.openLocal(), folder: place.folder)
        plans.reach = timing.reach
        printPlans(try await plans.fetch(days: days))
    }
}

func printPlans(_ result: CoachPlans.Result) {
    if result.planned.isEmpty { print("No planned workouts in the coming days.") }
    let today = LocalDay.today()
    for planned in result.planned {
        print(
            "\(planned.day)\(planned.day == today ? " (today)" : ""): \(shown(planned.name)) → workout "
                + "\(planned.workoutId)\(planned.newToTheLibrary ? " (new)" : ""), suggested as \(planned.presetId)")
    }
    for skipped in result.skipped { print("skipped: \(shown(skipped))") }
    for removed in result.removed { print("removed the suggestion \(removed)") }
}
