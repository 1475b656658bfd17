import Capture
import Foundation
import GRDB
import Workouts

/// The workout database: SQLite through GRDB in WAL mode, named migrations that are never edited once they
/// have shipped, written in small transactions so that a crash loses at most the last one.
public final class WorkoutStore: Sendable {
    let queue: DatabaseQueue

    /// Opens (creating if needed) the database at `path`, and brings its schema up to date.
    public init(path: String) throws(StoreError) {
        do {
            var configuration = Configuration()
            configuration.journalMode = .wal
            // Another cyclelog (a live ride, a replay) may hold the write lock for a moment.
            configuration.busyMode = .timeout(5)
            configuration.foreignKeysEnabled = true
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try Self.migrator.migrate(queue)
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// A private in-memory database, for tests.
    public init() throws(StoreError) {
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            queue = try DatabaseQueue(configuration: configuration)
            try Self.migrator.migrate(queue)
        } catch {
            throw StoreError(error, path: ":memory:")
        }
    }

    /// `$CYCLELOG_DB`, else `$XDG_DATA_HOME/cyclelog/cyclelog.sqlite`, else `~/.local/share/cyclelog/…`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["CYCLELOG_DB"], !path.isEmpty { return path }
        let dataHome: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            dataHome = xdg
        } else {
            dataHome = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        }
        return dataHome + "/cyclelog/cyclelog.sqlite"
    }

    /// The schema, one named migration per change. Never edit a migration that has shipped: add one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 workouts, laps, events, dropouts, sensors, samples, journal") { db in
            try db.execute(
                sql: """
                    CREATE TABLE workout (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        syncIdentifier TEXT NOT NULL UNIQUE,
                        version INTEGER NOT NULL DEFAULT 1,
                        -- 'recording' until the last transaction of a ride or replay lands.
                        status TEXT NOT NULL DEFAULT 'recording',
                        source TEXT NOT NULL,
                        journalDigest TEXT,
                        name TEXT,
                        location TEXT,
                        goal TEXT,
                        sessionState TEXT,
                        startMicroseconds INTEGER NOT NULL,
                        endMicroseconds INTEGER,
                        elapsedSeconds REAL,
                        movingSeconds REAL,
                        distanceMeters REAL,
                        averagePowerWatts REAL,
                        statistics BLOB
                    );
                    CREATE INDEX workoutByStart ON workout(startMicroseconds);
                    CREATE TABLE lap (
                        workoutId INTEGER NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        number INTEGER NOT NULL,
                        startMicroseconds INTEGER NOT NULL,
                        endMicroseconds INTEGER NOT NULL,
                        statistics BLOB NOT NULL,
                        PRIMARY KEY (workoutId, number)
                    ) WITHOUT ROWID;
                    CREATE TABLE workoutEvent (
                        workoutId INTEGER NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        sequence INTEGER NOT NULL,
                        timeMicroseconds INTEGER NOT NULL,
                        -- The journal line of the control, which carries its name, goal or text exactly.
                        journalLine TEXT NOT NULL,
                        PRIMARY KEY (workoutId, sequence)
                    ) WITHOUT ROWID;
                    CREATE TABLE dropout (
                        workoutId INTEGER NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        sequence INTEGER NOT NULL,
                        sensor TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        startMicroseconds INTEGER NOT NULL,
                        endMicroseconds INTEGER NOT NULL,
                        PRIMARY KEY (workoutId, sequence)
                    ) WITHOUT ROWID;
                    CREATE TABLE workoutSensor (
                        workoutId INTEGER NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        address TEXT NOT NULL,
                        name TEXT,
                        wheelCircumferenceMillimetres INTEGER NOT NULL,
                        batteryPercent INTEGER,
                        PRIMARY KEY (workoutId, position)
                    ) WITHOUT ROWID;
                    -- Sensors a rider has used, remembered across rides with their wheel circumference.
                    CREATE TABLE sensor (
                        address TEXT PRIMARY KEY NOT NULL,
                        name TEXT,
                        wheelCircumferenceMillimetres INTEGER,
                        lastSeenMicroseconds INTEGER
                    ) WITHOUT ROWID;
                    -- The 1 Hz series, packed per minute (see StoredPacking).
                    CREATE TABLE sampleChunk (
                        workoutId INTEGER NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        firstSecond INTEGER NOT NULL,
                        samples BLOB NOT NULL,
                        PRIMARY KEY (workoutId, firstSecond)
                    ) WITHOUT ROWID;
                    -- The raw events of the ride, compact and deflated (see CompactJournal), for `cyclelog rebuild`.
                    CREATE TABLE journalChunk (
                        workoutId INTEGER NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        sequence INTEGER NOT NULL,
                        events BLOB NOT NULL,
                        PRIMARY KEY (workoutId, sequence)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v2 power curves, FTP history, fitness tests") { db in
            try db.execute(
                sql: """
                    ALTER TABLE workout ADD COLUMN fitnessTest TEXT;
                    -- Each ride's best power for every duration, one little-endian Float32 per second of duration
                    -- (4 bytes per second of the longest running segment): history queries never recompute it.
                    CREATE TABLE powerCurve (
                        workoutId INTEGER PRIMARY KEY NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        watts BLOB NOT NULL
                    );
                    -- The automatic FTP after every ride, rebuilt from the power curves whenever a ride is saved or
                    -- deleted (derived data: no foreign keys).
                    CREATE TABLE ftpEstimate (
                        sequence INTEGER PRIMARY KEY NOT NULL,
                        workoutId INTEGER NOT NULL,
                        effectiveMicroseconds INTEGER NOT NULL,
                        method TEXT NOT NULL,
                        watts REAL NOT NULL,
                        criticalPowerWatts REAL,
                        wPrimeJoules REAL,
                        best20MinuteWatts REAL,
                        windowDays INTEGER
                    );
                    CREATE TABLE ftpEffort (
                        estimateSequence INTEGER NOT NULL,
                        position INTEGER NOT NULL,
                        workoutId INTEGER NOT NULL,
                        rideStartMicroseconds INTEGER NOT NULL,
                        durationSeconds INTEGER NOT NULL,
                        watts REAL NOT NULL,
                        PRIMARY KEY (estimateSequence, position)
                    ) WITHOUT ROWID;
                    -- The rider's own decisions: 'manual' values and 'accept'ing automatic values again.
                    CREATE TABLE ftpSetting (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        kind TEXT NOT NULL CHECK (kind IN ('manual', 'accept')),
                        watts REAL,
                        effectiveMicroseconds INTEGER NOT NULL,
                        createdMicroseconds INTEGER NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v3 remembered sensors") { db in
            try db.execute(
                sql: """
                    -- The sensors `cyclelog record` uses when none are named, with what the rider set for each.
                    CREATE TABLE knownSensor (
                        address TEXT PRIMARY KEY NOT NULL,
                        name TEXT,
                        wheelCircumferenceMillimetres INTEGER,
                        lastUsedMicroseconds INTEGER NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v4 imported files") { db in
            try db.execute(
                sql: """
                    -- The file an imported ride came from, byte for byte: what `cyclelog rebuild` reads it from again
                    -- (the counterpart of journalChunk for a recorded ride).
                    CREATE TABLE importedFile (
                        workoutId INTEGER PRIMARY KEY NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        fileName TEXT NOT NULL,
                        bytes BLOB NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v5 sensor care") { db in
            try db.execute(
                sql: """
                    ALTER TABLE knownSensor ADD COLUMN crankLengthMillimetres REAL;
                    -- What a power meter answered through its Cycling Power Control Point (`cyclelog calibrate`),
                    -- shown with the next workout.
                    CREATE TABLE calibration (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        address TEXT NOT NULL,
                        timeMicroseconds INTEGER NOT NULL,
                        operation TEXT NOT NULL,
                        succeeded INTEGER NOT NULL,
                        value REAL,
                        unit TEXT,
                        explanation TEXT NOT NULL,
                        response BLOB
                    );
                    CREATE INDEX calibrationByAddress ON calibration (address, timeMicroseconds);
                    """)
        }
        return migrator
    }

    func write<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try queue.write(body)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(error, path: queue.path)
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try queue.read(body)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(error, path: queue.path)
        }
    }

    /// `PRAGMA integrity_check`: "ok", or what SQLite found wrong.
    public func integrityCheck() throws(StoreError) -> String {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }
}

/// A database problem, in words a rider understands.
public struct StoreError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    init(_ error: any Error, path: String) {
        guard let database = error as? DatabaseError else {
            description = "the workout database \(path): \(error)"
            return
        }
        switch database.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            description =
                "the workout database \(path) is locked by another program (another cyclelog?); nothing was written"
        case .SQLITE_FULL:
            description = "the disk holding \(path) is full; the last change was not written, the rest is safe"
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN:
            description = "cannot write the workout database \(path): check that the folder exists and is writable"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            description = "\(path) is not a healthy cyclelog database (\(database.message ?? "corrupt"))"
        default:
            description = "the workout database \(path): \(database.message ?? "\(database.resultCode)")"
        }
    }
}
