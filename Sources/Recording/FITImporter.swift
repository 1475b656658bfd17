import FIT
import FITImport
import Foundation
import RideIdentity
import WorkoutStore
import Workouts

/// Stores rides from bike computers' FIT activity files. A file is identified by its file_id (maker, product,
/// serial number, creation time), so importing it again, or a copy of it, finds the ride already stored; a
/// changed file with the same identity (edited, re-saved) replaces the stored ride as a new version. A file that
/// cannot be read is refused whole, naming the byte where it went wrong.
public struct FITImporter {
    public let store: WorkoutStore
    /// False when importing many files: the caller refreshes the FTP history once at the end.
    public var refreshesFTP = true
    /// Whether a deleted ride may be stored again (`--undelete`), and a pulled one replaced (a pull).
    public var rules = WorkoutStore.ClaimRules()

    public init(store: WorkoutStore) {
        self.store = store
    }

    /// Imports a file's rides: one, or each cycling session of a multisport file.
    public func importFile(_ path: String) throws(ReplayError) -> [Replayer.Outcome] {
        try store(Self.read(path))
    }

    public func importBytes(_ bytes: [UInt8], name: String) throws(ReplayError) -> [Replayer.Outcome] {
        try store(Self.decode(bytes, name: name))
    }

    /// A FIT file read and decoded, nothing stored yet: reading needs no database, so the next file can be read
    /// while this one is stored, or the first one while the database opens.
    public struct ReadFile: Sendable {
        public let name: String
        let bytes: [UInt8]
        /// The file's SHA-256, its content's identity.
        let digest: String
        /// The file's rides, each with its stored parts made (power curve, statistics, packed 1 Hz series), or why
        /// it holds none that can be imported.
        let activities: Result<[(activity: ImportedActivity, prepared: WorkoutStore.PreparedWorkout)], ReplayError>
    }

    /// Reads and decodes a file; its problems wait in the result until `store(_:)` reports them.
    public static func read(_ path: String) -> ReadFile {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return ReadFile(
                name: path, bytes: [], digest: "",
                activities: .failure(ReplayError(.unreadable, path: path, unreadable(errno))))
        }
        do {
            return decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), name: path)
        } catch {
            let reason = "cannot be read (\((error as NSError).localizedDescription))"
            return ReadFile(
                name: path, bytes: [], digest: "", activities: .failure(ReplayError(.unreadable, path: path, reason)))
        }
    }

    static func decode(_ bytes: [UInt8], name: String) -> ReadFile {
        let activities: Result<[(activity: ImportedActivity, prepared: WorkoutStore.PreparedWorkout)], ReplayError>
        do {
            // Prepared here, beside the database opening or the file before being stored, rather than after.
            activities = .success(
                try FITActivityReader.read(bytes).map { ($0, WorkoutStore.PreparedWorkout($0.workout)) })
        } catch {
            activities = .failure(ReplayError(.notARide, "\(name) \(error); nothing was imported"))
        }
        return ReadFile(name: name, bytes: bytes, digest: RideIdentity.digest(bytes: bytes), activities: activities)
    }

    /// Stores the rides of a file read by `read(_:)`, or throws what was wrong with it.
    public func store(_ file: ReadFile) throws(ReplayError) -> [Replayer.Outcome] {
        let (bytes, name, digest) = (file.bytes, file.name, file.digest)
        let activities = try file.activities.get()
        var outcomes: [Replayer.Outcome] = []
        for (activity, prepared) in activities {
            // The device and time the file names, else the file's bytes (and the session of a multisport file).
            let identity =
                activity.fileIdentity ?? "fit-bytes:" + digest + (activity.sessionNumber.map { "#\($0)" } ?? "")
            let named = RideIdentity.syncIdentifier(digest: RideIdentity.digest(bytes: Array(identity.utf8)))
            let legacy = LegacyFITIdentity.syncIdentifier(
                fileIdentity: activity.fileIdentity, bytes: bytes, sessionNumber: activity.sessionNumber)
            do throws(StoreError) {
                // A file imported by an earlier cyclelog keeps the identifier it was given then.
                var existing = try store.workout(syncIdentifier: named)
                if existing == nil { existing = try store.workout(syncIdentifier: legacy) }
                let syncIdentifier = existing?.syncIdentifier ?? named
                if let existing, existing.complete, existing.contentDigest == digest,
                    let summary = try store.summary(existing.id)
                {
                    outcomes.append(
                        Replayer.Outcome(summary: summary, alreadyStored: true, problems: notes(activity, name)))
                    continue
                }
                let summary = try store.saveImported(
                    prepared, syncIdentifier: syncIdentifier, fileName: name, bytes: bytes, digest: digest,
                    replacing: existing?.id, sessionNumber: activity.sessionNumber, refreshingFTP: refreshesFTP,
                    rules: rules)
                outcomes.append(
                    Replayer.Outcome(summary: summary, alreadyStored: false, problems: notes(activity, name)))
            } catch {
                throw ReplayError(error, prefix: "\(name): ").adding("; nothing more was imported")
            }
        }
        return outcomes
    }

    /// Builds an imported workout again from the file stored with it.
    public func rebuild(_ id: Int64) throws(ReplayError) -> Replayer.Outcome? {
        let file: (fileName: String, bytes: [UInt8], session: Int?)?
        do throws(StoreError) {
            file = try store.importedFile(id)
        } catch {
            throw ReplayError(error, prefix: "workout \(id): ")
        }
        guard let file else { return nil }
        let activity: ImportedActivity
        do {
            let activities = try FITActivityReader.read(file.bytes)
            guard let chosen = activities.first(where: { $0.sessionNumber == file.session }) ?? activities.first
            else { throw ReplayError(.notARide, "workout \(id)'s stored file \(file.fileName) holds no ride") }
            activity = chosen
        } catch let error as ReplayError {
            throw error
        } catch {
            throw ReplayError(.notARide, "workout \(id)'s stored file \(file.fileName) \(error)")
        }
        do throws(StoreError) {
            let summary = try store.saveImported(
                WorkoutStore.PreparedWorkout(activity.workout), syncIdentifier: "", fileName: file.fileName,
                bytes: file.bytes,
                digest: RideIdentity.digest(bytes: file.bytes), replacing: id, sessionNumber: file.session,
                rules: WorkoutStore.ClaimRules(replacePulled: true))
            return Replayer.Outcome(summary: summary, alreadyStored: false, problems: notes(activity, file.fileName))
        } catch {
            throw ReplayError(error, prefix: "workout \(id): ")
        }
    }

    private func notes(_ activity: ImportedActivity, _ name: String) -> [String] {
        activity.notes.map { "\(name): \($0)" }
    }
}
