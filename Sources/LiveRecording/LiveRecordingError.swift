import ExitStatus

/// Why a live recording could not start or could not save, in a rider's words.
public struct LiveRecordingError: ExplainedError, Sendable {
    /// What kind of problem, for programs; `description` says it in words.
    public enum Code: String, Sendable {
        /// No adapter, or not the one named.
        case noAdapter
        /// No sensor found, or none remembered for `--auto`.
        case noSensors
        /// BlueZ or the system bus refused or went away.
        case bluetooth
        /// The database could not store the ride (its journal is kept).
        case store
        /// Nothing arrived to save.
        case nothingToSave
        /// The power meter's control point is missing, silent or answered something malformed.
        case controlPoint
    }

    public var code: Code
    public var description: String

    /// No adapter or no bus means Bluetooth cannot be used; the rest is this ride's failure.
    public var exitStatus: ExitStatus {
        switch code {
        case .noAdapter, .bluetooth: .cannotUse
        case .noSensors, .store, .nothingToSave, .controlPoint: .failed
        }
    }

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
