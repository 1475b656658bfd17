import Crypto
import Foundation
import GRDB
import StructuredWorkouts

/// A structured workout in the library: built in, or imported from a file whose bytes are kept.
public struct LibraryWorkout: Equatable, Sendable {
    /// Lower-case letters, digits and `-`, from the workout's name.
    public var id: String
    public var workout: StructuredWorkout
    /// `builtin`, or the format of the file it came from (`zwo`, `erg`, `mrc`, `fit`).
    public var source: String
    /// The file's name as it was imported (none for a built-in one).
    public var fileName: String?
    /// SHA-256 of the canonical text (`WorkoutText`), in hex: one workout, whatever file it came from.
    public var contentDigest: String
    public var importedMicroseconds: Int64?

    public var isBuiltIn: Bool { source == "builtin" }

    public static func digest(_ workout: StructuredWorkout) -> String {
        SHA256.hash(data: Array(WorkoutText.text(workout).utf8)).map {
            ($0 < 16 ? "0" : "") + String($0, radix: 16)
        }.joined()
    }
}

/// The library as a list shows it: the workouts that can be read, and the rows that cannot (an import by an older
/// cyclelog that held fewer bounds, a damaged row), each with why: one such row never hides the others.
public struct LibraryListing: Sendable {
    public var workouts: [LibraryWorkout]
    public var unreadable: [(id: String, reason: String)]
}

extension WorkoutStore {
    /// The columns a library workout is read from; the canonical text only when it is within the bound every
    /// workout keeps (a longer one is not read at all), and never the imported file's bytes.
    private static let libraryColumns = """
        id, format, fileName, contentDigest, importedMicroseconds,
        CASE WHEN length(CAST(canonicalText AS BLOB)) <= \(StructuredWorkout.maximumCanonicalTextBytes)
            THEN canonicalText END AS canonicalText,
        length(CAST(canonicalText AS BLOB)) AS canonicalTextBytes
        """

    /// The built-in workouts, then the imported ones by id, and the rows that cannot be read.
    public func libraryWorkouts() throws(StoreError) -> LibraryListing {
        var listing = LibraryListing(workouts: BuiltInWorkouts.all.map(Self.builtIn), unreadable: [])
        let rows = try read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.libraryColumns) FROM libraryWorkout ORDER BY id")
        }
        for row in rows {
            do throws(StoreError) {
                listing.workouts.append(try Self.libraryWorkout(row))
            } catch {
                listing.unreadable.append((row["id"] ?? "?", error.description))
            }
        }
        return listing
    }

    /// One workout by its id: a built-in one, else the one row (a start reads only the workout it rides, not every
    /// workout of the library).
    public func libraryWorkout(_ id: String) throws(StoreError) -> LibraryWorkout? {
        if let workout = BuiltInWorkouts.workout(id: id) { return Self.builtIn((id, workout)) }
        let row = try read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.libraryColumns) FROM libraryWorkout WHERE id = ?", arguments: [id])
        }
        guard let row else { return nil }
        return try Self.libraryWorkout(row)
    }

    private static func builtIn(_ entry: (id: String, workout: StructuredWorkout)) -> LibraryWorkout {
        LibraryWorkout(
            id: entry.id, workout: entry.workout, source: "builtin", fileName: nil,
            contentDigest: LibraryWorkout.digest(entry.workout), importedMicroseconds: nil)
    }

    /// What an import did: added under an id, or found the same workout already there.
    public enum LibraryImport: Equatable, Sendable {
        case added(id: String)
        case alreadyThere(id: String)
    }

    /// Adds a workout read from a file, with the file's bytes; one that is already in the library (the same
    /// canonical text) is not added twice.
    public func importWorkout(
        _ workout: StructuredWorkout, format: String, fileName: String, sourceBytes: [UInt8], at microseconds: Int64
    ) throws(StoreError) -> LibraryImport {
        // The readers hold these already; the library holds them too, whoever calls, so that every row reads back.
        if let violation = workout.limitViolation() {
            throw StoreError(.conflict, "the workout is not imported: \(violation)")
        }
        let digest = LibraryWorkout.digest(workout)
        if let builtIn = BuiltInWorkouts.all.first(where: { LibraryWorkout.digest($0.workout) == digest }) {
            return .alreadyThere(id: builtIn.id)
        }
        return try write { db in
            if let id = try String.fetchOne(
                db, sql: "SELECT id FROM libraryWorkout WHERE contentDigest = ?", arguments: [digest])
            {
                return .alreadyThere(id: id)
            }
            let taken = Set(try String.fetchAll(db, sql: "SELECT id FROM libraryWorkout"))
                .union(BuiltInWorkouts.all.map(\.id))
            let base = Self.libraryID(workout.name)
            var id = base
            var number = 2
            while taken.contains(id) {
                id = "\(base.prefix(36))-\(number)"
                number += 1
            }
            try db.execute(
                sql: """
                    INSERT INTO libraryWorkout (id, name, format, fileName, sourceBytes, canonicalText, contentDigest,
                    importedMicroseconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    id, workout.name, format, fileName, Data(sourceBytes), WorkoutText.text(workout), digest,
                    microseconds,
                ])
            return .added(id: id)
        }
    }

    /// Removes an imported workout; false when there is none. A built-in one cannot be removed.
    public func removeLibraryWorkout(_ id: String) throws(StoreError) -> Bool {
        if BuiltInWorkouts.workout(id: id) != nil {
            throw StoreError(.conflict, "\(id) is built in and cannot be removed")
        }
        return try write { db in
            try db.execute(sql: "DELETE FROM libraryWorkout WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    /// An id from a name: lower-case ASCII letters and digits, other runs as one `-`, at most 40.
    static func libraryID(_ name: String) -> String {
        var id = ""
        for scalar in name.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                id.unicodeScalars.append(scalar)
            } else if !id.isEmpty, !id.hasSuffix("-") {
                id += "-"
            }
        }
        while id.hasSuffix("-") { id.removeLast() }
        id = String(id.prefix(40))
        while id.hasSuffix("-") { id.removeLast() }
        return id.isEmpty ? "workout" : id
    }

    private static func libraryWorkout(_ row: Row) throws(StoreError) -> LibraryWorkout {
        let id: String = row["id"] ?? "?"
        let removal = " (cyclelog workouts remove \(id), then import its file again)"
        guard let text: String = row["canonicalText"] else {
            let bytes: Int = row["canonicalTextBytes"] ?? 0
            throw StoreError(
                .damaged,
                "the library's workout \(id) cannot be read: its text is \(StructuredWorkout.byteCount(bytes)), "
                    + "more than a workout may hold\(removal)")
        }
        let workout: StructuredWorkout
        do {
            workout = try WorkoutText.parse(text)
        } catch {
            throw StoreError(.damaged, "the library's workout \(id) cannot be read: \(error)\(removal)")
        }
        return LibraryWorkout(
            id: id, workout: workout, source: row["format"] ?? "?", fileName: row["fileName"],
            contentDigest: row["contentDigest"] ?? "", importedMicroseconds: row["importedMicroseconds"])
    }
}

/// Why a workout cannot be ridden: no such id in the library.
public struct UnknownWorkout: Error, Sendable, CustomStringConvertible {
    public var id: String

    public init(id: String) { self.id = id }

    public var description: String {
        "there is no workout '\(id.count > 40 ? String(id.prefix(40)) + "…" : id)' in the library; "
            + "`cyclelog workouts list` shows them"
    }
}

extension WorkoutStore {
    /// A library workout ready to ride: the workout and the FTP its shares are taken of (`ftpWatts` when given,
    /// else the FTP in force at `time`, else none). The ramp test is built for `rampStartWatts` and
    /// `rampStepWatts` when given.
    public func plannedWorkout(
        _ id: String, ftpWatts: Int? = nil, at time: Int64, rampStartWatts: Int? = nil, rampStepWatts: Int? = nil
    ) throws -> PlannedWorkout {
        var workout: StructuredWorkout
        if id == "ramp-test" {
            workout = BuiltInWorkouts.ramp(startWatts: rampStartWatts ?? 100, stepWatts: rampStepWatts ?? 20)
        } else {
            guard let entry = try libraryWorkout(id) else { throw UnknownWorkout(id: id) }
            workout = entry.workout
        }
        let ftp = try ftpWatts ?? ftpHistory(asOf: [time]).inForce(at: time).map { Int($0.watts.rounded()) }
        return PlannedWorkout(workout, ftpWatts: workout.needsFTP ? ftp : nil)
    }
}
