import ArgumentParser
import BlueZ
import LiveRecording
import ProgramMain
import Recording
import WorkoutStore

/// The one place where an error of the libraries becomes what a rider reads and the exit status (Docs/reference/exit-status.md, "Exit
/// status"): 1 when the input or the ride failed, 2 when the database or Bluetooth cannot be used. Commands
/// throw these errors as they are; usage mistakes stay ArgumentParser's (64).
enum Failure {
    /// The exit status for a library error, nil for any other error.
    static func status(_ error: any Error) -> Int32? {
        switch error {
        case let error as StoreError:
            switch error.code {
            case .notFound, .conflict, .deleted: 1
            case .busy, .diskFull, .readOnly, .badPath, .notOurs, .newerLayout, .damaged, .other: 2
            }
        case is ReplayError: 1
        case let error as LiveRecordingError:
            switch error.code {
            case .noAdapter, .bluetooth: 2
            case .noSensors, .store, .nothingToSave, .controlPoint: 1
            }
        case is BlueZError: 2
        default: nil
        }
    }

    /// Runs a parsed command; a library error is printed in its own words with its status.
    static func run(_ arguments: [String], root: any AsyncParsableCommand.Type) async -> Never {
        do {
            var command = try root.parseAsRoot(arguments)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            root.exit()
        } catch {
            guard let status = status(error) else { root.exitSaying(error, as: "cyclelog") }
            printError("cyclelog: \(error)")
            root.exit(withError: ExitCode(status))
        }
    }
}
