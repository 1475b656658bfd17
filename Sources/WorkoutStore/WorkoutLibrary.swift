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

extension WorkoutStore {
    /// The built-in workouts, then the imported ones by id.
    public func libraryWorkouts() throws(StoreError) -> [LibraryWorkout] {
        let imported = try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM libraryWorkout ORDER BY id").map { row in
                try Self.libraryWorkout(row)
            }
        }
        return BuiltInWorkouts.all.map(Self.builtIn) + imported
    }

    /// One workout by its id: a built-in one, else the one row (a start reads only the workout it rides, not every
    /// workout of the library).
    public func libraryWorkout(_ id: String) throws(StoreError) -> LibraryWorkout? {
        if let workout = BuiltInWorkouts.workout(id: id) { return Self.builtIn((id, workout)) }
        return try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM libraryWorkout WHERE id = ?", arguments: [id]).map { row in
                try Self.libraryWorkout(row)
            }
        }
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

    private static func libraryWorkout(_ row: Row) throws -> LibraryWorkout {
        let text: String = try row.decode(forColumn: "canonicalText")
        let id: String = try row.decode(forColumn: "id")
        let workout: StructuredWorkout
        do {
            workout = try WorkoutText.parse(text)
        } catch {
            throw StoreError(.damaged, "the library's workout \(id) cannot be read: \(error)")
        }
        return LibraryWorkout(
            id: id, workout: workout, source: try row.decode(forColumn: "format"),
            fileName: try row.decode(forColumn: "fileName"), contentDigest: try row.decode(forColumn: "contentDigest"),
            importedMicroseconds: try row.decode(forColumn: "importedMicroseconds"))
    }
}

/// Why a workout cannot be ridden: no such id in the library.
public struct UnknownWorkout: Error, Sendable, CustomStringConvertible {
    public var id: String

    public init(id: String) { self.id = id }

    public var description: String {
        "no workout '\(id.count > 40 ? String(id.prefix(40)) + "…" : id)' in the library (cyclelog workouts list)"
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
        let ftp = try ftpWatts ?? ftpHistory().inForce(at: time).map { Int($0.watts.rounded()) }
        return PlannedWorkout(workout, ftpWatts: workout.needsFTP ? ftp : nil)
    }
}
