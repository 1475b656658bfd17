import ExitStatus
import Foundation
import GRDB

/// A database problem, in words a rider understands.
public struct StoreError: ExplainedError {
    /// What kind of problem, for programs (exit statuses, retries); `description` says it in words.
    public enum Code: String, Sendable {
        /// Another program holds the database's lock.
        case busy
        case diskFull
        /// This user may not write the database or its folder.
        case readOnly
        /// The path names no usable file (empty, a folder, a URI, a missing folder, too long, not openable).
        case badPath
        /// Not a SQLite file, or another program's tables: left untouched.
        case notOurs
        /// A newer cyclelog's layout: left untouched.
        case newerLayout
        /// SQLite or a stored value found damage.
        case damaged
        /// Another cyclelog writes the same workout, or took it over.
        case conflict
        /// A workout that is not (or no longer) there.
        case notFound
        /// A ride deleted before, which is not stored again unless the rider says so (`--undelete`).
        case deleted
        case other
    }

    public var code: Code
    public var description: String
    /// SQLite's result code and message when SQLite said it (for logs; `description` is for the rider).
    public var cause: String?
    /// The disk is full: the caller can say what of its work was kept.
    public var isDiskFull: Bool { code == .diskFull }

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// The exit status of the programs: a ride not there or taken is the request's failure; everything else means
    /// the database cannot be used.
    public var exitStatus: ExitStatus {
        switch code {
        case .notFound, .conflict, .deleted: .failed
        case .busy, .diskFull, .readOnly, .badPath, .notOurs, .newerLayout, .damaged, .other: .cannotUse
        }
    }

    init(_ error: any Error, path: String) {
        guard let database = error as? DatabaseError else {
            code = .other
            description = "the workout database \(path): \(error)"
            return
        }
        cause = "SQLite result code \(database.extendedResultCode.rawValue): \(database.message ?? "")"
        switch database.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: code = .busy
        case .SQLITE_FULL: code = .diskFull
        case .SQLITE_READONLY, .SQLITE_PERM: code = .readOnly
        case .SQLITE_CANTOPEN: code = .badPath
        case .SQLITE_NOTADB: code = .notOurs
        case .SQLITE_CORRUPT: code = .damaged
        default: code = .other
        }
        switch database.resultCode {
        case .SQLITE_INTERRUPT:
            description = "reading \(path) was stopped part-way: whoever asked for it went away"
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            description =
                "the workout database \(path) is locked by another program (another cyclelog?); nothing was written"
        case .SQLITE_FULL:
            description = "the disk holding \(path) is full; the last change was not written, the rest is safe"
        case .SQLITE_READONLY, .SQLITE_PERM:
            description =
                "the workout database \(path) is read-only for this user (or its folder is): reading commands work, "
                + "storing needs write access to both"
        case .SQLITE_CANTOPEN:
            description = "cannot open the workout database \(path): check that this user may read it and its folder"
        case .SQLITE_NOTADB:
            description = "\(path) is not a SQLite database, so not a cyclelog one; it was left untouched"
        case .SQLITE_CORRUPT:
            description = "\(path) is damaged (\(database.message ?? "corrupt")); `cyclelog doctor` says what to do"
        default:
            description = "the workout database \(path): \(database.message ?? "\(database.resultCode)")"
        }
    }
}
