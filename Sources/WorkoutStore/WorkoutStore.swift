import ExitStatus
import Foundation
import GRDB
import GRDBSQLite
import RideIdentity
import RideJournal
import Workouts

/// The workout database: SQLite through GRDB in WAL mode, named migrations that are never edited once they
/// have shipped, written in small transactions so that a crash loses at most the last one.
public final class WorkoutStore: Sendable {
    let queue: DatabaseQueue
    /// Opened by a reading command: nothing is ever written, not even a cache (Docs/reference/storage.md, "What commands do to a
    /// database").
    public let isReadOnly: Bool

    /// How a command uses the database.
    public enum Access: Sendable {
        /// Reading commands (`list`, `show`, `export`, `chart`, `ftp`, `doctor`…): opened read-only, never migrated,
        /// never waiting for a writer (WAL readers do not block). A database that does not exist yet reads as empty;
        /// one whose layout is not yet up to date reads through an updated copy in memory.
        case read
        /// Commands that store rides or settings: created if missing, migrated once under SQLite's write lock.
        case write
    }

    /// What a reader checks now and then (every few thousand SQLite steps): when it answers true, the statement
    /// running stops with SQLITE_INTERRUPT (the mirror's client went away: its request's reading is not finished for
    /// nobody).
    public typealias Abandonment = @Sendable () -> Bool

    /// Keeps `abandonWhen` alive for SQLite's progress handler, which holds only a raw pointer to it.
    private let abandonment: AbandonmentBox?

    final class AbandonmentBox: Sendable {
        let check: Abandonment
        init(_ check: @escaping Abandonment) { self.check = check }
    }

    /// Opens the database at `path`. Writing, it is created if needed and its schema brought up to date; either
    /// way, a file that is not a cyclelog database, or one made by a newer cyclelog, is refused untouched. Reading,
    /// `abandonWhen` can stop a long read part-way.
    public init(path: String, access: Access = .write, abandonWhen: Abandonment? = nil) throws(StoreError) {
        try Self.checkPath(path, writing: access == .write)
        isReadOnly = access == .read
        let box = abandonWhen.map(AbandonmentBox.init)
        abandonment = box
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            if let box {
                configuration.prepareDatabase { db in
                    // Every 1000 virtual-machine steps: microseconds apart, so a client's leaving stops a reading at
                    // once, at a cost too small to measure.
                    sqlite3_progress_handler(
                        db.sqliteConnection, 1000,
                        { context in
                            guard let context else { return 0 }
                            return Unmanaged<AbandonmentBox>.fromOpaque(context).takeUnretainedValue().check() ? 1 : 0
                        }, Unmanaged.passUnretained(box).toOpaque())
                }
            }
            // Another cyclelog (a live ride, a replay) may hold the write lock for a moment; a reader waits for it
            // too, since a database being created is not yet in WAL mode, where readers never wait.
            configuration.busyMode = .timeout(5)
            if access == .read {
                var file: DatabaseQueue?
                var layout = Layout.empty
                if FileManager.default.fileExists(atPath: path) {
                    configuration.readonly = true
                    var opened: DatabaseQueue
                    do {
                        opened = try DatabaseQueue(path: path, configuration: configuration)
                        layout = try Self.checkOwnership(opened, path: path)
                    } catch let error as DatabaseError where Self.canReadImmutable(error, path: path) {
                        // A WAL database without its -wal and -shm files, where this user may not create them (a
                        // backup on read-only media, another user's folder): SQLite cannot open it read-only the
                        // usual way. With no -wal file (or an empty one) nobody has it open and nothing is in the
                        // log, so it is read as the file it is.
                        opened = try DatabaseQueue(path: Self.immutableURI(path), configuration: configuration)
                        layout = try Self.checkOwnership(opened, path: path)
                    }
                    if layout != .empty { file = opened }
                }
                if let file, layout == .current {
                    queue = file
                } else if let file {
                    // A layout with migrations still to come: an older cyclelog's, or one another cyclelog is
                    // creating this moment (each migration is its own transaction, so a reader can come between
                    // two). Read as it is, a query would meet a table not made yet. A consistent copy in memory,
                    // brought up to date there, answers instead; the file is left as it is.
                    configuration.readonly = false
                    let copy = try DatabaseQueue(configuration: configuration)
                    try file.backup(to: copy)
                    try file.close()
                    try Self.migrator.migrate(copy)
                    queue = copy
                } else {
                    // Nothing stored yet: an empty database, in memory, answers every question.
                    configuration.readonly = false
                    queue = try DatabaseQueue(configuration: configuration)
                    try Self.migrator.migrate(queue)
                }
                return
            }
            configuration.prepareDatabase { db in
                // The WAL's -wal and -shm files stay when the last writer closes: a rider who may only read the
                // database (the service's rides, through its group) can then open it read-only, which SQLite
                // cannot do for a WAL database whose -shm it would have to create.
                var persist: CInt = 1
                sqlite3_file_control(db.sqliteConnection, nil, SQLITE_FCNTL_PERSIST_WAL, &persist)
                // Kept, but emptied: a WAL is truncated to this size whenever it is reset, so a long replay leaves
                // no megabytes of spent log beside the database.
                try db.execute(sql: "PRAGMA journal_size_limit = 0")
            }
            queue = try DatabaseQueue(path: path, configuration: configuration)
            let isNew = try Self.checkOwnership(queue, path: path) == .empty
            try Self.useWAL(queue)
            if isNew {
                // A new database holds nothing to lose: its tables are made without waiting for the disk after each
                // step (in WAL mode NORMAL never corrupts; a power cut loses at most the empty tables, made again
                // next time). The first real transaction, at the usual FULL, makes them durable with itself.
                let usual = try queue.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } ?? 2
                try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                try Self.migrate(queue)
                try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(usual)") }
            } else {
                try Self.migrate(queue)
            }
            try queue.write { db in
                if try !Self.ftpHistoryIsCurrent(db) { try Self.refreshFTPEstimates(db) }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Whether a read-only opening that failed with `error` can read the file as immutable: SQLite could not open
    /// a WAL database's shared memory, and the log beside it is missing or empty (so no connection has it open).
    static func canReadImmutable(_ error: DatabaseError, path: String) -> Bool {
        guard [.SQLITE_READONLY, .SQLITE_CANTOPEN].contains(error.resultCode) else { return false }
        let log = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? NSNumber
        return log == nil || log?.intValue == 0
    }

    /// The file as an SQLite URI opened immutable (its path's `%`, `?` and `#` escaped, as RFC 3986 asks).
    static func immutableURI(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return "file:" + escaped + "?immutable=1"
    }

    /// A private in-memory database, for tests.
    public init() throws(StoreError) {
        isReadOnly = false
        abandonment = nil
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            queue = try DatabaseQueue(configuration: configuration)
            try Self.migrator.migrate(queue)
        } catch {
            throw StoreError(error, path: ":memory:")
        }
    }

    /// Paths SQLite would take in another sense, or cannot take, each refused with its own words.
    static func checkPath(_ path: String, writing: Bool) throws(StoreError) {
        if path.isEmpty { throw StoreError(.badPath, "no database was named (an empty --db or $CYCLELOG_DB)") }
        if path.hasPrefix("file:") {
            throw StoreError(.badPath, "\(path) is a URI; name the database by its file path (without file:)")
        }
        let name = (path as NSString).lastPathComponent
        if name.utf8.count > Int(NAME_MAX) || path.utf8.count >= Int(PATH_MAX) {
            throw StoreError(.badPath, "the database name \(name.prefix(40))… is longer than the file system allows")
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw StoreError(.badPath, "\(path) is a folder; name a database file in it, e.g. \(path)/cyclelog.sqlite")
        }
        let folder = (path as NSString).deletingLastPathComponent
        if writing && !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            throw StoreError(.badPath, "the folder \(folder) for the workout database does not exist")
        }
        // A read-only mount: said as what it is, before SQLite fails to open the file for writing (which it reports
        // as a file it cannot open).
        var system = statvfs()
        if writing, statvfs(folder.isEmpty ? "." : folder, &system) == 0, system.f_flag & UInt(ST_RDONLY) != 0 {
            throw StoreError(
                .readOnly,
                "the workout database \(path) is on a read-only file system: reading commands work (list, show, "
                    + "export), storing a ride needs it mounted writable")
        }
    }

    /// Refuses, before anything is written, a database that holds another program's tables or was made by a newer
    /// cyclelog. (Reading, an older cyclelog's layout is read through an updated copy in memory: the next writing
    /// command updates the file.)
    /// Returns how far the layout is: a database with no tables at all (a new, empty file) is `empty`.
    @discardableResult
    static func checkOwnership(_ queue: DatabaseQueue, path: String) throws -> Layout {
        try queue.read { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            // A new database another cyclelog is creating this moment has the migrations table, nothing else yet.
            if tables.isEmpty || tables == ["grdb_migrations"] { return .empty }
            let known = Set(migrator.migrations)
            guard tables.contains("grdb_migrations"),
                let applied = try? String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"),
                applied.contains(migrator.migrations[0]), tables.contains("workout")
            else {
                let shown = tables.sorted().prefix(4).joined(separator: ", ")
                throw StoreError(
                    .notOurs,
                    "\(path) is not a cyclelog database (it holds \(shown)\(tables.count > 4 ? "…" : "")); "
                        + "it was left untouched: name another file with --db")
            }
            if let newer = applied.first(where: { !known.contains($0) }) {
                throw StoreError(
                    .newerLayout,
                    "\(path) was written by a newer cyclelog (its layout has \"\(newer)\"); this version cannot use "
                        + "it and left it untouched: use the newer cyclelog")
            }
            return known.isSubset(of: applied) ? .current : .behind
        }
    }

    /// How far a database's layout is, as `checkOwnership` finds it.
    enum Layout {
        /// No tables yet (a new file, or one another cyclelog is creating this moment).
        case empty
        /// Every migration applied.
        case current
        /// Migrations still to come: an older cyclelog's layout, or one being created between two migrations.
        case behind
    }

    /// Puts the database in WAL mode (readers never wait for a writer). Switching needs the database to itself for
    /// a moment, and SQLite answers "busy" at once, without its busy timeout, when waiting could deadlock: another
    /// cyclelog creating the same new database holds the write lock. Asked again until the usual 5 s have passed.
    static func useWAL(_ queue: DatabaseQueue) throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            do {
                try queue.writeWithoutTransaction { db in
                    if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                        try db.execute(sql: "PRAGMA journal_mode = WAL")
                    }
                }
                return
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline
            {
                usleep(10_000)
            }
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

    /// How a sync identifier is stored and compared: in lower case, as RFC 9562 writes a UUID (a UUID compares
    /// without regard to case, and a journal may spell it either way).
    public static func canonical(_ syncIdentifier: String) -> String {
        syncIdentifier.lowercased()
    }

    /// Workout ids as one JSON array, for `IN (SELECT value FROM json_each(?))`: one argument however many ids, where
    /// a variable each would pass the most a statement takes.
    static func jsonArray(_ ids: some Sequence<Int64>) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }

    /// A transaction. Not `durable`, its commit does not wait for the disk (in WAL mode, synchronous NORMAL): the
    /// database is never corrupted, but a power cut may take this transaction back, until the next durable commit
    /// makes it durable with itself (the log is written in order). A replay's 25 journal pieces thus cost one wait
    /// for the disk, at their workout's last transaction, instead of one each.
    func write<T>(durable: Bool = true, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            guard !durable else { return try queue.write(body) }
            return try queue.writeWithoutTransaction { db in
                let usual = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? 2
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                defer { try? db.execute(sql: "PRAGMA synchronous = \(usual)") }
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
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
