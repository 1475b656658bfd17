import Foundation
import GRDB
import Recording
import WorkoutStore

/// One collector: its own SQLite database in a temporary folder.
public struct Collector {
    public let path: String
    public let store: WorkoutStore

    public init(_ name: String = "collector") throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("\(name).sqlite").path
        store = try WorkoutStore(path: path)
    }

    /// A copy of this database's file as it is now, on another machine (restored from a backup, say): the same
    /// rides and rider, a collector of its own.
    public func copy(_ name: String) throws -> Collector {
        let other = try Collector(name)
        try FileManager.default.removeItem(atPath: other.path)
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM INTO ?", arguments: [other.path])
        }
        let copy = Collector(path: other.path, store: try WorkoutStore(path: other.path))
        try copy.newCollectorIdentity()
        return copy
    }

    private init(path: String, store: WorkoutStore) {
        self.path = path
        self.store = store
    }

    /// Replays a journal of the fixtures; returns the workout's id.
    @discardableResult
    public func replay(_ fixture: String, options: Replayer.Options = Replayer.Options()) throws -> Int64 {
        let capture = try CaptureFile.load(Fixtures.folder + "/" + fixture)
        return try Replayer(store: store, options: options).replay(capture).summary.id
    }
}

extension Collector {
    /// This database as a collector of its own (a copy keeps the original's identity until told otherwise).
    public func newCollectorIdentity() throws {
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE rider SET collectorUUID = ?", arguments: [UUID().uuidString.lowercased()])
        }
    }
}

/// The journals of `Fixtures/` the sync and upload tests store.
public enum Fixtures {
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures").path
    public static let journals = [
        "journals/4iiii-crank-power-meter.journal", "journals/favero-assioma-uno.journal", "journals/srm-pm9.journal",
        "journals/powertap-p1-pedals.journal", "journals/stages-sc3-indoor-bike.journal",
    ]
}
