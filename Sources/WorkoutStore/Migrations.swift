import Foundation
import GRDB
import RideIdentity
import RideJournal
import Workouts

/// The schema's history: one named migration per change, applied in order, never edited once shipped.
extension WorkoutStore {
    /// Brings the schema up to date. Two cyclelogs opening a new database at once both try; each migration is its
    /// own immediate transaction, so the one that comes second to a migration fails on the other's tables, reads
    /// again and goes on from there. A process killed part-way leaves whole migrations only: the next one finishes.
    static func migrate(_ queue: DatabaseQueue) throws {
        while true {
            let appliedBefore = try appliedIdentifiers(queue)
            do {
                if Set(migrator.migrations).isSubset(of: appliedBefore) { return }
                try migrator.migrate(queue)
                return
            } catch let error as DatabaseError
                where error.resultCode == .SQLITE_ERROR || error.resultCode == .SQLITE_CONSTRAINT
            {
                // "table workout already exists", "duplicate column name", or for a migration that changes no
                // table "UNIQUE constraint failed: grdb_migrations.identifier": another process migrated meanwhile.
                // The same error with nothing applied by anyone since is this migration's own failure.
                let appliedAfter = try appliedIdentifiers(queue)
                if appliedAfter.isSubset(of: appliedBefore) { throw error }
            }
        }
    }

    /// The migrations applied. A reading that finds no migrations table has none applied, whatever is there a moment
    /// later: GRDB's own reading, on "no such table", looks again whether the table exists and reports the error when
    /// another process has just created it (a new database being made this moment), which made a command fail with
    /// status 2 when ten replays opened a new database together. The callers read again after migrating.
    static func appliedIdentifiers(_ queue: DatabaseQueue) throws -> Set<String> {
        try queue.read { db in
            do {
                return try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations")
            } catch let error as DatabaseError
                where [.SQLITE_ERROR, .SQLITE_SCHEMA].contains(error.resultCode)
                && (error.message ?? "").hasPrefix("no such table")
            {
                // SQLITE_SCHEMA: the table changed under the statement as many times as SQLite prepares it again,
                // and was not there the last time.
                return []
            }
        }
    }

    /// The schema, one named migration per change. Never edit a migration that has shipped: add one. Each only
    /// creates tables and indexes and adds columns, so foreign keys are checked as it runs (`.immediate`); GRDB's
    /// deferred checks would turn them off and check the whole database after each migration, for nothing.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(
            "v1 workouts, laps, events, dropouts, sensors, samples, journal", foreignKeyChecks: .immediate
        ) { db in
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
        migrator.registerMigration("v2 power curves, FTP history, fitness tests", foreignKeyChecks: .immediate) { db in
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
        migrator.registerMigration("v3 remembered sensors", foreignKeyChecks: .immediate) { db in
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
        migrator.registerMigration("v4 imported files", foreignKeyChecks: .immediate) { db in
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
        migrator.registerMigration("v5 sensor care", foreignKeyChecks: .immediate) { db in
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
        migrator.registerMigration(
            "v6 build claims, derived state, sessions of imported files", foreignKeyChecks: .immediate
        ) { db in
            try db.execute(
                sql: """
                    -- Which build holds a workout being written, and when it last wrote: a second replay of the same
                    -- file waits or reports instead of mixing its journal into the first one's (WorkoutStore.Claim).
                    ALTER TABLE workout ADD COLUMN claimToken TEXT;
                    ALTER TABLE workout ADD COLUMN claimedMicroseconds INTEGER;
                    -- What derived data was last computed from: the FTP history is rebuilt by the next command that
                    -- writes whenever the complete rides no longer match its basis (a kill between a batch of imports
                    -- and the refresh, a full disk).
                    CREATE TABLE derivedState (name TEXT PRIMARY KEY NOT NULL, basis TEXT NOT NULL);
                    -- Which session of a multisport file a ride is (1 for the first); NULL for the whole file.
                    ALTER TABLE importedFile ADD COLUMN session INTEGER;
                    """)
        }
        migrator.registerMigration("v7 ride identity by SHA-256 over the journal", foreignKeyChecks: .immediate) { db in
            try db.execute(
                sql: """
                    -- RideIdentity: journalDigest now holds the content digest (SHA-256 of the journal's text, or of
                    -- an imported file's bytes), sourceDigest the digest of the events without settings, by which a
                    -- file replayed again finds its ride; digestVersion says which rule computed them.
                    ALTER TABLE workout ADD COLUMN sourceDigest TEXT;
                    ALTER TABLE workout ADD COLUMN digestVersion INTEGER;
                    CREATE INDEX workoutBySourceDigest ON workout (sourceDigest);
                    """)
            try recomputeDigests(db)
        }
        migrator.registerMigration("v8 problems found in a ride's events", foreignKeyChecks: .immediate) { db in
            try db.execute(
                sql: """
                    -- How many problems the builder found in the ride's events (malformed values, refused controls,
                    -- clock faults); NULL for rides stored before it was counted.
                    ALTER TABLE workout ADD COLUMN problemCount INTEGER;
                    """)
        }
        migrator.registerMigration("v9 the suggested workout a ride was started from", foreignKeyChecks: .immediate) {
            db in
            try db.execute(
                sql: """
                    -- WorkoutPreset.id of `cyclelog start PRESET` or D-Bus Start's `preset`; NULL otherwise.
                    ALTER TABLE workout ADD COLUMN preset TEXT;
                    """)
        }
        migrator.registerMigration("v10 suggested workouts", foreignKeyChecks: .immediate) { db in
            try db.execute(
                sql: """
                    -- The rider's presets, and the built-in ones as the rider edited them (WorkoutPreset.builtIn
                    -- holds the rest). Each column is a key of a Start's style; NULL leaves it open.
                    CREATE TABLE preset (
                        id TEXT PRIMARY KEY NOT NULL,
                        title TEXT NOT NULL,
                        name TEXT,
                        goal TEXT,
                        location TEXT,
                        fitnessTest TEXT,
                        startWhenPedalling INTEGER NOT NULL DEFAULT 0,
                        endAtGoal INTEGER NOT NULL DEFAULT 0
                    );
                    -- Pinned presets come first, then the most recently used (built-in ones too).
                    CREATE TABLE presetUse (
                        id TEXT PRIMARY KEY NOT NULL,
                        pinned INTEGER NOT NULL DEFAULT 0,
                        lastUsedMicroseconds INTEGER
                    );
                    """)
        }
        migrator.registerMigration("v11 a mark of the database's last change", foreignKeyChecks: .immediate) { db in
            try db.execute(
                sql: """
                    -- A fresh random number after every insert, update and delete in every table (the triggers
                    -- below): the ride history's ETag, so that `cyclelog-mirror` answers a page unchanged since it
                    -- was last served without reading the rides again (Docs/guide/second-screen.md, "The ride history"). Random rather
                    -- than counted: a database restored from a copy, or made anew, never comes back to a mark a
                    -- browser holds for other contents.
                    CREATE TABLE changeMark (id INTEGER PRIMARY KEY CHECK (id = 1), mark INTEGER NOT NULL);
                    INSERT INTO changeMark VALUES (1, random());
                    """)
            let tables = try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                    AND name NOT IN ('grdb_migrations', 'changeMark')
                    """)
            for table in tables { try db.execute(sql: markedChanges(of: table)) }
        }
        migrator.registerMigration("v12 rider, collector and sync state", foreignKeyChecks: .immediate) { db in
            try db.execute(
                sql: """
                    -- Whose rides these are, and this database as one collector of them (Docs/guide/sync.md, "Rides on every
                    -- machine"): named by `cyclelog rider`, made an existing rider's by `cyclelog-sync join`.
                    CREATE TABLE rider (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        uuid TEXT NOT NULL,
                        name TEXT NOT NULL,
                        collectorUUID TEXT NOT NULL,
                        collectorName TEXT NOT NULL
                    );
                    -- The collector a ride pulled from the shared store was recorded by; NULL for rides made here.
                    ALTER TABLE workout ADD COLUMN collector TEXT;
                    -- The version and content digest the shared store last acknowledged for this ride.
                    ALTER TABLE workout ADD COLUMN syncedVersion INTEGER;
                    ALTER TABLE workout ADD COLUMN syncedDigest TEXT;
                    -- A deleted ride's identity and the version its deletion is: synced, so that no old copy brings
                    -- the ride back.
                    CREATE TABLE tombstone (
                        syncIdentifier TEXT PRIMARY KEY NOT NULL,
                        version INTEGER NOT NULL,
                        deletedMicroseconds INTEGER NOT NULL,
                        synced INTEGER NOT NULL DEFAULT 0
                    ) WITHOUT ROWID;
                    -- How the last syncs went, for `cyclelog-sync status` and its back-off.
                    CREATE TABLE syncStatus (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        lastSuccessMicroseconds INTEGER,
                        lastFailureMicroseconds INTEGER,
                        lastFailure TEXT,
                        failuresInARow INTEGER NOT NULL DEFAULT 0
                    );
                    """)
            let user = ProcessInfo.processInfo.environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "rider"
            try db.execute(
                sql: "INSERT INTO rider VALUES (1, ?, ?, ?, ?)",
                arguments: [UUID().uuidString.lowercased(), user, UUID().uuidString.lowercased(), hostName])
            for table in ["rider", "tombstone", "syncStatus"] { try db.execute(sql: markedChanges(of: table)) }
        }
        migrator.registerMigration("v13 a ride's name given by the rider", foreignKeyChecks: .immediate) { db in
            // 1 once `cyclelog rename` named the ride: a rebuild keeps that name instead of the recorded one.
            try db.execute(sql: "ALTER TABLE workout ADD COLUMN renamed INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v14 journal chunks packed by channel", foreignKeyChecks: .immediate) { _ in
            // No table changes: chunks written from here on are packed by channel (`CompactJournal`), which a
            // cyclelog from before reads as damaged. This name makes it refuse the database untouched instead.
        }
        migrator.registerMigration("v15 sync identifiers in lower case", foreignKeyChecks: .immediate) { db in
            // A live ride's identity was written in upper case, every other ride's and the shared store's in lower
            // case (RFC 9562): the same ride then looked like two to the sync. Identities are kept in lower case
            // from here on (`canonical`); each journal keeps its own bytes. OR IGNORE: should both spellings of
            // one identity be stored already, the second keeps its own.
            try db.execute(
                sql: """
                    UPDATE OR IGNORE workout SET syncIdentifier = lower(syncIdentifier)
                    WHERE syncIdentifier <> lower(syncIdentifier);
                    UPDATE OR IGNORE tombstone SET syncIdentifier = lower(syncIdentifier)
                    WHERE syncIdentifier <> lower(syncIdentifier);
                    """)
        }
        migrator.registerMigration("v16 the ride counted among overlapping rides", foreignKeyChecks: .immediate) { db in
            // Rides that overlap in time are one ride recorded twice (`RideOverlaps`): the statistics count one of
            // each group. A row here is the rider's choice of the ride to count (`cyclelog duplicates keep`), the
            // latest choice winning; without one, the ride stored first counts. Kept on this machine only.
            try db.execute(
                sql: """
                    CREATE TABLE countedRide (
                        workoutId INTEGER PRIMARY KEY NOT NULL REFERENCES workout(id) ON DELETE CASCADE,
                        chosenMicroseconds INTEGER NOT NULL
                    );
                    """)
            try db.execute(sql: markedChanges(of: "countedRide"))
        }
        migrator.registerMigration("v17 the workout library", foreignKeyChecks: .immediate) { db in
            // Structured workouts imported from files: the file's own bytes (kept: the original is never lost to
            // what this version reads of it), the canonical text read from them (what is ridden), and its digest
            // (the same workout is kept once).
            try db.execute(
                sql: """
                    CREATE TABLE libraryWorkout (
                        id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        format TEXT NOT NULL,
                        fileName TEXT NOT NULL,
                        sourceBytes BLOB NOT NULL,
                        canonicalText TEXT NOT NULL,
                        contentDigest TEXT NOT NULL UNIQUE,
                        importedMicroseconds INTEGER NOT NULL
                    );
                    """)
            try db.execute(sql: markedChanges(of: "libraryWorkout"))
            // A preset may name a workout of the library to ride.
            try db.execute(sql: "ALTER TABLE preset ADD COLUMN workout TEXT")
        }
        migrator.registerMigration(
            "v18 uploads to training services and the coach's plan", foreignKeyChecks: .immediate
        ) {
            db in
            // What was sent of each ride to each service (intervals.icu, Strava), by the ride's sync identifier, so
            // that a ride is uploaded once per service whatever fails on the way (Docs/guide/uploads.md): the
            // version sent or being sent, the upload's state, the service's ids, the last refusal. No credential
            // is ever stored here.
            try db.execute(
                sql: """
                    CREATE TABLE remoteUpload (
                        syncIdentifier TEXT NOT NULL,
                        service TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        state TEXT NOT NULL,
                        remoteId TEXT,
                        uploadId TEXT,
                        previousRemoteId TEXT,
                        detailsVersion INTEGER,
                        lastError TEXT,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        updatedMicroseconds INTEGER NOT NULL,
                        PRIMARY KEY (syncIdentifier, service)
                    );
                    """)
            try db.execute(sql: markedChanges(of: "remoteUpload"))
            // A preset made from the coach's plan: the local day it is planned for (today's comes first among the
            // suggested workouts) and the coach's description.
            try db.execute(sql: "ALTER TABLE preset ADD COLUMN plannedDay TEXT")
            try db.execute(sql: "ALTER TABLE preset ADD COLUMN note TEXT")
        }
        migrator.registerMigration("v19 what the FTP history was computed from", foreignKeyChecks: .immediate) { db in
            // Each complete ride as the FTP history last saw it (derived data: no foreign keys). A save, delete,
            // rebuild or choice among overlapping rides changes some of them; the history is computed again from
            // the earliest start among those on, the part before it kept (`refreshFTPEstimates`). Empty here: the
            // next command that writes computes the whole history once.
            try db.execute(
                sql: """
                    CREATE TABLE ftpScoredRide (
                        workoutId INTEGER PRIMARY KEY NOT NULL,
                        version INTEGER NOT NULL,
                        contentDigest TEXT,
                        startMicroseconds INTEGER NOT NULL,
                        endMicroseconds INTEGER NOT NULL,
                        fitnessTest TEXT,
                        counted INTEGER NOT NULL
                    );
                    DELETE FROM derivedState WHERE name = 'ftpHistory';
                    """)
            try db.execute(sql: markedChanges(of: "ftpScoredRide"))
        }
        migrator.registerMigration("v20 the complete rides by their end", foreignKeyChecks: .immediate) { db in
            // A page of rides finds the rides it overlaps through this (`rideOverlaps(of:)`), not by reading every
            // ride; the expression and the condition are the query's own, as SQLite needs to use it.
            try db.execute(
                sql: """
                    CREATE INDEX workoutCompleteByEnd ON workout (coalesce(endMicroseconds, startMicroseconds))
                    WHERE status = 'complete'
                    """)
        }
        migrator.registerMigration("v21 the complete rides' versions", foreignKeyChecks: .immediate) { db in
            // Every writing command checks that the FTP history follows the complete rides (`ftpBasis`: their
            // count, newest id and versions). This index holds all three, so the check reads it alone instead of
            // every ride's row: 1 ms rather than 4 at 5 000 rides, for every ride stored.
            try db.execute(
                sql: "CREATE INDEX workoutCompleteVersion ON workout (status, version) WHERE status = 'complete'")
        }
        migrator.registerMigration("v22 the complete rides' versions, not by status", foreignKeyChecks: .immediate) {
            db in
            // v21's index led with the status: SQLite, which has no statistics of the table, then took
            // `status = 'complete'` for the most selective term of every query that has it, and read every complete
            // ride through it where the start's index reads a window (the FTP history's update, the power curves'
            // window). This one holds what the check reads (the status too, or SQLite reads each row to test it)
            // without offering the status to search: it comes second.
            try db.execute(
                sql: """
                    DROP INDEX workoutCompleteVersion;
                    CREATE INDEX workoutCompleteVersions ON workout (version, status) WHERE status = 'complete';
                    """)
        }
        migrator.registerMigration("v23 the uploadable rides by their identity", foreignKeyChecks: .immediate) { db in
            // An upload reads the rides it covers: those started since the account was added (by the index on the
            // start) and those with an upload row (by this), never every ride. Rows hold identities in lower case
            // (`canonical`); a ride's may be in upper case where v15 found both spellings, and matches as Swift
            // compares them. The expression and the condition are the query's own, as SQLite needs to use it.
            try db.execute(
                sql: """
                    CREATE INDEX workoutUploadableByIdentity ON workout (lower(syncIdentifier))
                    WHERE status = 'complete' AND collector IS NULL
                    """)
        }
        migrator.registerMigration("v24 how far each shared store has been pulled", foreignKeyChecks: .immediate) {
            db in
            try db.execute(
                sql: """
                    -- Per shared store and rider (cyclelog-sync), the transaction ID below which every ride row has
                    -- been read: the next pull reads the rows written from there on, not every row.
                    CREATE TABLE pullHorizon (
                        store TEXT NOT NULL,
                        rider TEXT NOT NULL,
                        horizon INTEGER NOT NULL CHECK (horizon >= 0),
                        PRIMARY KEY (store, rider)
                    ) WITHOUT ROWID;
                    """)
            try db.execute(sql: markedChanges(of: "pullHorizon"))
        }
        migrator.registerMigration("v25 what the uploads found settled", foreignKeyChecks: .immediate) { db in
            // A ride's place in the order of changes that matter to an upload: a number above every other ride's,
            // given by the triggers when the ride is stored and whenever its status, collector, version, identity or
            // start changes. An upload run that found every ride it covers settled keeps, per service, the number it
            // saw (`uploadSettled`); its next run reads the rides numbered above it and the rows under way, not every
            // ride it covers (Docs/reference/storage.md, "Derived data stays true"). The rides stored before take
            // their id: no run has kept a number yet.
            try db.execute(
                sql: """
                    ALTER TABLE workout ADD COLUMN changeSequence INTEGER NOT NULL DEFAULT 0;
                    UPDATE workout SET changeSequence = id;
                    CREATE INDEX workoutByChange ON workout (changeSequence);
                    CREATE TRIGGER workoutInsertCounted AFTER INSERT ON workout BEGIN
                        UPDATE workout SET changeSequence = (SELECT max(changeSequence) FROM workout) + 1
                        WHERE id = NEW.id;
                    END;
                    CREATE TRIGGER workoutUpdateCounted
                    AFTER UPDATE OF status, collector, version, syncIdentifier, startMicroseconds ON workout
                    WHEN OLD.status IS NOT NEW.status OR OLD.collector IS NOT NEW.collector
                    OR OLD.version IS NOT NEW.version OR OLD.syncIdentifier IS NOT NEW.syncIdentifier
                    OR OLD.startMicroseconds IS NOT NEW.startMicroseconds BEGIN
                        UPDATE workout SET changeSequence = (SELECT max(changeSequence) FROM workout) + 1
                        WHERE id = NEW.id;
                    END;
                    -- Per service, the accounts' start (`since`) and the change number through which every ride
                    -- an automatic upload covers was settled, but for rows still under way.
                    CREATE TABLE uploadSettled (
                        service TEXT PRIMARY KEY NOT NULL,
                        since INTEGER NOT NULL,
                        throughChange INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    -- The rows under way (sent, being read, being replaced), which a run reads whatever the mark.
                    CREATE INDEX remoteUploadUnderWay ON remoteUpload (service)
                    WHERE state IN ('sending', 'processing', 'replacing');
                    -- A row gone (none is deleted today) could leave a ride behind the mark: the mark goes too.
                    CREATE TRIGGER remoteUploadDeleteUnsettles AFTER DELETE ON remoteUpload BEGIN
                        DELETE FROM uploadSettled WHERE service = OLD.service;
                    END;
                    """)
            try db.execute(sql: markedChanges(of: "uploadSettled"))
        }
        migrator.registerMigration("v26 each week's best power", foreignKeyChecks: .immediate) { db in
            // Per week of 7 days from 1970-01-01, the pointwise maximum of the power curves of the complete rides
            // started in it that the statistics count, when there are two or more (derived data: no foreign keys):
            // a window of rides reads its whole weeks from here (`CurveWeeks`). `watts` as `powerCurve`'s;
            // `sources`, for each duration the ride that holds it, as runs (little-endian UInt32 index in `holders`,
            // UInt32 count of durations); `holders`, each ride's id and start (little-endian Int64). Empty here: the
            // next command that writes makes every week, with the FTP history it brings up to date.
            try db.execute(
                sql: """
                    CREATE TABLE powerCurveWeek (
                        week INTEGER PRIMARY KEY NOT NULL,
                        rides INTEGER NOT NULL,
                        poweredRides INTEGER NOT NULL,
                        watts BLOB NOT NULL,
                        sources BLOB NOT NULL,
                        holders BLOB NOT NULL
                    );
                    DELETE FROM derivedState WHERE name = 'ftpHistory';
                    """)
            try db.execute(sql: markedChanges(of: "powerCurveWeek"))
        }
        migrator.registerMigration("v27 the complete rides' changes", foreignKeyChecks: .immediate) { db in
            // What the FTP history was computed from (`ftpBasis`), kept as two counters that the triggers raise with
            // every change of a complete ride (stored, deleted, or a column the history reads changed) and of the
            // rider's choices among overlapping rides, in the same transaction; and which rides changed since
            // (`rideChange`, emptied by the update of the history). The check every writing command, the power
            // curves' window and the ride's page make reads one row, and the update reads the rides that changed,
            // instead of every ride (4.3 M and 30 M instructions at 5 000 rides). A count never goes back, so no
            // two states share a basis. The next command that writes compares every ride once, with the new basis.
            let changed = "INSERT OR IGNORE INTO rideChange VALUES"
            let raise = { (counter: String, rides: String) in
                "BEGIN UPDATE rideGeneration SET \(counter) = \(counter) + 1; \(rides) END;"
            }
            try db.execute(
                sql: """
                    CREATE TABLE rideGeneration (rides INTEGER NOT NULL, choices INTEGER NOT NULL);
                    INSERT INTO rideGeneration VALUES (0, 0);
                    CREATE TABLE rideChange (workoutId INTEGER PRIMARY KEY NOT NULL);
                    CREATE TRIGGER workoutCompleteInsertCounted AFTER INSERT ON workout
                    WHEN NEW.status = 'complete' \(raise("rides", "\(changed) (NEW.id);"))
                    CREATE TRIGGER workoutCompleteUpdateCounted AFTER UPDATE OF
                    id, status, version, journalDigest, startMicroseconds, endMicroseconds, fitnessTest ON workout
                    WHEN NEW.status = 'complete' OR OLD.status = 'complete'
                    \(raise("rides", "\(changed) (OLD.id); \(changed) (NEW.id);"))
                    CREATE TRIGGER workoutCompleteDeleteCounted AFTER DELETE ON workout
                    WHEN OLD.status = 'complete' \(raise("rides", "\(changed) (OLD.id);"))
                    CREATE TRIGGER countedRideInsertCounted AFTER INSERT ON countedRide \(raise("choices", ""))
                    CREATE TRIGGER countedRideUpdateCounted AFTER UPDATE ON countedRide \(raise("choices", ""))
                    CREATE TRIGGER countedRideDeleteCounted AFTER DELETE ON countedRide \(raise("choices", ""))
                    """)
            try db.execute(sql: markedChanges(of: "rideGeneration"))
            try db.execute(sql: markedChanges(of: "rideChange"))
        }
        migrator.registerMigration("v28 the power curves packed by differences", foreignKeyChecks: .immediate) { db in
            // Each ride's curve and each week's envelope from a Float32 per duration to `StoredPacking.packCurve`'s
            // differences: the same watts to the bit in half the bytes (a ride-hour's curve 14.4 → about 7 kB).
            for (table, keyColumn) in [("powerCurve", "workoutId"), ("powerCurveWeek", "week")] {
                let read = try db.makeStatement(sql: "SELECT watts FROM \(table) WHERE \(keyColumn) = ?")
                let update = try db.makeStatement(sql: "UPDATE \(table) SET watts = ? WHERE \(keyColumn) = ?")
                for key in try Int64.fetchAll(db, sql: "SELECT \(keyColumn) FROM \(table)") {
                    let blob = try Data.fetchOne(read, arguments: [key]) ?? Data()
                    try update.execute(arguments: [
                        Data(StoredPacking.packCurve(StoredPacking.unpackFloatCurve(blob))), key,
                    ])
                }
            }
        }
        return migrator
    }

    /// The triggers that mark each change to `table` in `changeMark`. A later migration that adds a table adds
    /// these for it too.
    static func markedChanges(of table: String) -> String {
        ["INSERT", "UPDATE", "DELETE"].map { event in
            """
            CREATE TRIGGER \(table)\(event.capitalized)Marked AFTER \(event) ON \(table)
            BEGIN UPDATE changeMark SET mark = random(); END;
            """
        }.joined(separator: "\n")
    }
}

extension WorkoutStore {
    /// Every complete ride's digests by this cyclelog's rule, from what is stored: its journal, or its imported
    /// file. A ride whose stored journal cannot be read keeps no digest (a replay of its file stores it again as a
    /// new version); nothing else about it changes.
    static func recomputeDigests(_ db: Database) throws {
        let ids = try Int64.fetchAll(db, sql: "SELECT id FROM workout WHERE status = 'complete'")
        for id in ids {
            var digests: Digests?
            let blobs = try journalChunks(id, db)
            if !blobs.isEmpty {
                // A damaged journal (the only way decoding fails) leaves the ride without digests.
                let events =
                    (try? decodeJournal(id, blobs) { blob throws(CompactJournal.DecodeError) in
                        try CompactJournal.decode(blob)
                    }) ?? []
                if !events.isEmpty {
                    let computed = RideDigests(events)
                    digests = Digests(source: computed.sourceHex, content: computed.contentHex)
                }
            } else if let bytes = try Data.fetchOne(
                db, sql: "SELECT bytes FROM importedFile WHERE workoutId = ?", arguments: [id])
            {
                digests = Digests(source: nil, content: RideIdentity.digest(bytes: [UInt8](bytes)))
            }
            try db.execute(
                sql: "UPDATE workout SET journalDigest = ?, sourceDigest = ?, digestVersion = ? WHERE id = ?",
                arguments: [digests?.content, digests?.source, digests.map { _ in RideIdentity.digestVersion }, id])
        }
    }
}
