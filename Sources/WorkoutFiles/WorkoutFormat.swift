import StructuredWorkouts

/// The workout files cyclelog reads, and the two it writes.
public enum WorkoutFormat: String, Sendable, CaseIterable {
    case zwo, erg, mrc, fit

    /// The format a file's name says (its extension, in any case); nil for another file.
    public init?(fileName: String) {
        guard let dot = fileName.lastIndex(of: ".") else { return nil }
        self.init(rawValue: fileName[fileName.index(after: dot)...].lowercased())
    }

    /// Whether cyclelog writes this format (`workouts export`).
    public var isWritten: Bool { self == .zwo || self == .fit }

    /// Reads a workout file whole: the workout, or why not (nothing half-read).
    public func read(_ bytes: [UInt8], fileName: String) throws(WorkoutReadError) -> StructuredWorkout {
        switch self {
        case .zwo: try ZWOFile.read(bytes)
        case .erg, .mrc:
            try ERGFile.read(bytes, fileName: Self.baseName(fileName))
        case .fit: try FITWorkoutFile.read(bytes)
        }
    }

    /// The file name without its folder and extension.
    static func baseName(_ fileName: String) -> String {
        let name = fileName.split(separator: "/").last.map(String.init) ?? fileName
        guard let dot = name.lastIndex(of: ".") else { return name }
        return String(name[..<dot])
    }
}
