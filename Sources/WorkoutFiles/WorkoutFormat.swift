import StructuredWorkouts

/// The workout files cyclelog reads, and the two it writes.
public enum WorkoutFormat: String, Sendable, CaseIterable {
    case zwo, erg, mrc, fit

    /// The format a file's name says (its extension, in any case); nil for another file.
    public init?(fileName: String) {
        guard let dot = fileName.lastIndex(of: ".") else { return nil }
        self.init(rawValue: fileName[fileName.index(after: dot)...].lowercased())
    }

    /// The largest workout file read, in bytes: a workout within every bound of `StructuredWorkout` fits in it
    /// (real files are a few kilobytes; 10 000 steps of .zwo are about 1 MB).
    public static let maximumFileBytes = 4_000_000

    /// Refuses a file larger than `maximumFileBytes` before a byte of it is read or parsed.
    public static func checkSize(_ byteCount: Int) throws(WorkoutReadError) {
        guard byteCount > maximumFileBytes else { return }
        throw WorkoutReadError(
            "the file",
            "is \(StructuredWorkout.byteCount(byteCount)); a workout file is at most "
                + StructuredWorkout.byteCount(maximumFileBytes))
    }

    /// Whether cyclelog writes this format (`workouts export`).
    public var isWritten: Bool { self == .zwo || self == .fit }

    /// What writing `workout` in this format leaves out or changes, in words (the export says them); empty when it
    /// keeps all of it, or for a format cyclelog does not write.
    public func losses(_ workout: StructuredWorkout) -> [String] {
        switch self {
        case .zwo: ZWOFile.losses(workout)
        case .fit: FITWorkoutFile.losses(workout)
        case .erg, .mrc: []
        }
    }

    /// "ramps, written as … (2 steps)": a loss with the steps it touches, or nil when it touches none.
    static func loss(_ what: String, _ steps: [WorkoutStep], _ test: (WorkoutStep) -> Bool) -> String? {
        let number = steps.filter(test).count
        return number == 0 ? nil : "\(what) (\(number) step\(number == 1 ? "" : "s"))"
    }

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
