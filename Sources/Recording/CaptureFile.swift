import Capture
import ExitStatus
import Formats
import Foundation
import RideJournal
import WorkoutStore
import Workouts

/// A capture file read into ride events: a btsnoop capture or a cyclelog journal, told apart by content.
public struct CaptureFile: Sendable {
    public enum Format: String, Sendable {
        case btsnoop
        case journal
    }

    public var path: String
    public var format: Format
    public var events: [RideEvent]
    /// The record (btsnoop) or line (journal) number of each event.
    public var origins: [Int]
    /// What could not be used, each naming its record or line.
    public var problems: [CaptureProblem]
    /// Notification handles nothing mapped to a characteristic (btsnoop only).
    public var unmappedHandles: [GATTReplay.UnmappedHandle]

    /// What a capture is called in messages: a record in btsnoop, a line in a journal.
    public var recordWord: String { format == .btsnoop ? "record" : "line" }

    /// Reads and parses `path`. `handleMap` maps btsnoop handles to characteristics when the capture has no
    /// discovery; `progress` gets the fraction read so far, for a progress bar.
    public static func load(
        _ path: String, handleMap: [UInt16: UInt16] = [:], progress: ((Double) -> Void)? = nil
    ) throws(ReplayError) -> CaptureFile {
        let bytes = try readCapture(path)
        if bytes.starts(with: Btsnoop.magic) {
            do {
                let replay = try GATTReplay.read(bytes, explicitMap: handleMap, progress: progress)
                return CaptureFile(
                    path: path, format: .btsnoop, events: replay.events, origins: replay.eventRecords,
                    problems: replay.problems, unmappedHandles: replay.unmappedHandles)
            } catch {
                throw ReplayError(.notARide, path: path, error.description)
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix(Journal.header) || UTCTime.parse(text.prefix { $0 != " " }) != nil else {
            throw notACapture(path, bytes)
        }
        let journal = Journal.read(text)
        return CaptureFile(
            path: path, format: .journal, events: journal.events, origins: journal.lines, problems: journal.problems,
            unmappedHandles: [])
    }
}

extension CaptureFile {
    /// A journal's text that came from elsewhere than a file (the shared store); `label` names it in messages.
    public static func journal(text: String, label: String) -> CaptureFile {
        let journal = Journal.read(text)
        return CaptureFile(
            path: label, format: .journal, events: journal.events, origins: journal.lines, problems: journal.problems,
            unmappedHandles: [])
    }
}

/// Why a file cannot be replayed, from its first bytes: a FIT activity file (its header says ".FIT" at byte 8) is
/// pointed to `import`, anything else named for what a capture is.
func notACapture(_ path: String, _ start: [UInt8]) -> ReplayError {
    if start.count >= 12, Array(start[8..<12]) == Array(".FIT".utf8) {
        // Quoted for the shell when it holds anything but letters, digits and -_./+,:@
        let plain = path.unicodeScalars.allSatisfy {
            $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_./+,:@".unicodeScalars.contains($0)
        }
        let typed = plain ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
        return ReplayError(
            .notARide, path: path,
            "is a FIT activity file (from a bike computer), not a capture: `cyclelog import \(typed)` stores it")
    }
    return ReplayError(
        .notARide, path: path, "is neither a btsnoop capture (btmon -w, Android btsnoop_hci.log) nor a cyclelog journal"
    )
}

/// A capture's bytes, from a file, a pipe or process substitution (`-` is standard input). The first bytes are
/// looked at before the rest is read: a file that is neither a btsnoop capture nor a journal is refused at once,
/// whatever its size.
func readCapture(_ path: String) throws(ReplayError) -> [UInt8] {
    let source = path == "-" ? "/dev/stdin" : path
    var status = stat()
    guard stat(source, &status) == 0 else { throw ReplayError(.unreadable, path: path, unreadable(errno)) }
    if status.st_mode & S_IFMT == S_IFDIR { throw ReplayError(.unreadable, path: path, "is a folder, not a capture") }
    guard let handle = FileHandle(forReadingAtPath: source) else {
        throw ReplayError(.unreadable, path: path, "cannot be read (\(String(cString: strerror(errno))))")
    }
    defer { try? handle.close() }
    do {
        // A pipe may deliver the first bytes in pieces.
        var head = Data()
        while head.count < 64, let piece = try handle.read(upToCount: 64 - head.count), !piece.isEmpty {
            head += piece
        }
        let start = [UInt8](head)
        let text = String(decoding: start, as: UTF8.self)
        let looksLikeJournal =
            text.hasPrefix(Journal.header) || UTCTime.parse(text.prefix { $0 != " " && $0 != "\n" }) != nil
        guard start.starts(with: Btsnoop.magic) || looksLikeJournal else { throw notACapture(path, start) }
        // The rest straight into the bytes kept (a regular file's size is known; a pipe's bytes grow as they come),
        // rather than into a Data and then a copy: a 4-hour capture is 4 MB.
        var bytes = start
        bytes.reserveCapacity(max(Int(status.st_size), start.count))
        var piece = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = piece.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count > 0 {
                bytes += piece[0..<count]
            } else if errno != EINTR {
                throw ReplayError(.unreadable, path: path, "cannot be read (\(String(cString: strerror(errno))))")
            }
        }
    } catch let error as ReplayError {
        throw error
    } catch {
        throw ReplayError(.unreadable, path: path, "cannot be read (\(error.localizedDescription))")
    }
}

/// Why a local file cannot be read, as every command that reads one says it.
func unreadable(_ code: Int32) -> String {
    switch code {
    case ENOENT: "no such file or folder"
    case EACCES: "this user may not read it"
    default: "cannot be read (\(String(cString: strerror(code))))"
    }
}

/// A replay that could not be done, naming the file.
public struct ReplayError: ExplainedError {
    /// What kind of problem, for programs; `description` says it in words, naming the file or workout.
    public enum Code: String, Sendable {
        /// The file cannot be read (missing, a folder, no permission).
        case unreadable
        /// The file is not a ride: not a capture, a damaged FIT file, nothing usable, no measurement.
        case notARide
        /// Its times go back or leap for most of it.
        case inconsistentTimes
        /// The database refused (`storeCode` says how).
        case store
        /// Another cyclelog is storing the same ride right now.
        case busy
        /// A workout with nothing stored to rebuild it from, or that vanished.
        case nothingToRebuild
        /// Not the ride the caller expects (`Replayer.Options.check`, a pull's): nothing was written.
        case unexpectedRide
    }

    public var code: Code
    /// The database's reason when `code` is `.store`.
    public var storeCode: StoreError.Code?
    public var description: String
    /// What the database said, when it refused.
    public var cause: String?
    /// A file it was given that cannot be read is a local file it cannot use (2); anything else is the input's
    /// failure (1).
    public var exitStatus: ExitStatus { code == .unreadable ? .cannotUse : .failed }

    public init(_ code: Code, path: String, _ message: String) {
        self.code = code
        description = "\(path): \(message)"
    }

    public init(_ code: Code, _ message: String) {
        self.code = code
        description = message
    }

    /// The same error, its description continued.
    func adding(_ text: String) -> ReplayError {
        var error = self
        error.description += text
        return error
    }

    /// A store error met while replaying, keeping its code.
    public init(_ error: StoreError, prefix: String = "") {
        code = .store
        storeCode = error.code
        description = prefix + error.description
        cause = error.cause
    }
}
