/// What a failure means to whoever ran the program: the exit status every cyclelog program gives for it
/// (Docs/reference/exit-status.md). One list for the three programs, so that a script reads them alike.
public enum ExitStatus: Int32, Sendable {
    /// The input or the ride failed, or the request was refused: a file that is not a ride, a ride with no
    /// measurement, an unknown workout, a meter or a server that said no.
    case failed = 1
    /// What the program needs cannot be used: the database (locked, full, read-only, not ours, damaged), Bluetooth
    /// or the bus, a local file it was pointed to.
    case cannotUse = 2
    /// A usage mistake on the command line (ArgumentParser's own).
    case usage = 64
    /// Try again later (`EX_TEMPFAIL`): a server that could not be reached; a timer or a path unit retries.
    case tryLater = 75
}

extension ExitStatus {
    /// The status of a batch (files replayed or imported one after another) once `error` failed too: the more
    /// serious of the two, what cannot be used (2) before the input's failure (1).
    public static func worst(_ sofar: ExitStatus?, _ error: any Error) -> ExitStatus {
        let status = (error as? any ExplainedError)?.exitStatus ?? .failed
        guard let sofar else { return status }
        return status.rawValue > sofar.rawValue ? status : sofar
    }
}

/// An error that says itself in a rider's words (`description`), knows its exit status, and keeps what the layer
/// below said (an SQLite result code, a PostgreSQL SQLSTATE, a D-Bus error name) for logs and debugging. Every
/// library error a program can end with is one; the programs end them all the same way (module ProgramMain).
public protocol ExplainedError: Error, CustomStringConvertible {
    var exitStatus: ExitStatus { get }
    /// The underlying error as its own layer named it; nil when the error is cyclelog's own.
    var cause: String? { get }
}

extension ExplainedError {
    public var cause: String? { nil }
}

/// A command's own failure or refusal, in words, with its exit status: what a program says when no library error
/// stands behind it (an unknown workout, nothing to do, a file it cannot write). Ended like every other
/// `ExplainedError`.
public struct CommandFailure: ExplainedError, Sendable {
    public var description: String
    public var exitStatus: ExitStatus

    public init(_ description: String, _ exitStatus: ExitStatus = .failed) {
        self.description = description
        self.exitStatus = exitStatus
    }
}
