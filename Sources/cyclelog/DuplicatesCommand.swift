import ArgumentParser
import ExitStatus
import Formats
import Foundation
import Recording
import RideWriting
import WorkoutStore
import Workouts

/// `cyclelog duplicates`: the stored rides that overlap in time (one ride recorded twice), and which one the
/// statistics count.
struct Duplicates: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "duplicates",
        abstract: "Lists rides that overlap in time (one ride recorded twice) and which one the FTP and load count.",
        discussion: """
            One rider rides one bike at a time: rides that overlap are the same ride recorded twice (a capture and \
            the bike computer's file, or two collectors). Both stay stored; the FTP, the power curve and the weekly \
            load count one of them — the one chosen with `cyclelog duplicates keep ID`, else the one stored first.
            """,
        subcommands: [DuplicatesList.self, DuplicatesKeep.self],
        defaultSubcommand: DuplicatesList.self)
}

struct DuplicatesList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Lists the groups of overlapping rides and the ride each counts.")

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Print a JSON array: each group's workouts, the one counted and the time they share.")
    var json = false

    func run() throws {
        let groups = try database.openRides().rideOverlaps().groups
        if json {
            let array = JSONValue.array(
                groups.map { group in
                    .object([
                        ("workouts", .array(group.rides.map(\.id).sorted().map { .integer($0) })),
                        ("counted", .integer(group.counted)),
                        ("commonSeconds", .rounded(group.commonSeconds, 3)),
                    ])
                })
            sayOnStandardOutput(array.rendered(pretty: true))
            return
        }
        if groups.isEmpty {
            sayOnStandardOutput("No rides overlap: every ride counts once.")
            return
        }
        for group in groups { sayOnStandardOutput(OverlapText.line(group)) }
        sayOnStandardOutput(
            "`cyclelog duplicates keep ID` counts another ride of a group; `cyclelog delete ID` drops one.")
    }
}

struct DuplicatesKeep: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keep", abstract: "Counts this ride, instead of the rides it overlaps, in the FTP and the load.")

    @OptionGroup var reference: WorkoutReference

    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let store = try database.open()
        let id = try reference.resolve(in: store)
        guard let group = try store.countAmongOverlaps(id, nowMicroseconds: wallClockMicroseconds()) else {
            throw CommandFailure("workout \(id) overlaps no other ride: it counts already")
        }
        sayOnStandardOutput(
            "Workout \(id) counts in the FTP and the weekly load; "
                + OverlapText.ids(group.setAside, singular: "is", plural: "are") + " set aside (still stored).")
    }
}

/// How overlapping rides are told, in `duplicates` and after a ride is stored.
enum OverlapText {
    static func line(_ group: RideOverlaps.Group) -> String {
        let first = group.rides.map(\.startMicroseconds).min() ?? 0
        let shared = group.commonSeconds > 0 ? " overlap by \(SummaryText.duration(group.commonSeconds))" : " overlap"
        return
            "\(ids(group.rides.map(\.id).sorted(), singular: "", plural: "")) (\(SummaryText.dateTime(first)))\(shared): "
            + "one ride recorded \(group.rides.count == 2 ? "twice" : "\(group.rides.count) times"); "
            + "counted: workout \(group.counted)"
    }

    /// "workout 4", "workouts 1 and 4", "workouts 1, 3 and 4", each followed by the verb for one or many.
    static func ids(_ ids: [Int64], singular: String, plural: String) -> String {
        let words = ids.map(String.init)
        let verb = ids.count == 1 ? singular : plural
        let list =
            words.count == 1
            ? "workout \(words[0])" : "workouts " + words.dropLast().joined(separator: ", ") + " and " + words.last!
        return verb.isEmpty ? list : list + " " + verb
    }

    /// The note after storing ride `id`, when it overlaps a stored ride; nil otherwise.
    static func notice(after id: Int64, in store: WorkoutStore) -> String? {
        // The rides around this one alone: its group is whole among them (`rideOverlaps(of:)`).
        guard let group = try? store.rideOverlaps(of: [id]).group(of: id) else { return nil }
        let others = group.rides.map(\.id).filter { $0 != id }.sorted()
        let same =
            "workout \(id) overlaps \(ids(others, singular: "", plural: "")) in time: the same ride recorded twice"
        if group.counted == id {
            return "note: \(same); the FTP and the weekly load count this one (`cyclelog duplicates` lists them)"
        }
        return "note: \(same); the FTP and the weekly load count workout \(group.counted) — "
            + "`cyclelog duplicates keep \(id)` counts this one instead, `cyclelog delete \(id)` drops it"
    }
}
