import ArgumentParser
import Foundation

extension AsyncParsableCommand {
    /// Parses the command line and runs the command; every message it ends with starts "`program`: " (the form the
    /// reference documents, Docs/reference/exit-status.md), where ArgumentParser's own would start "Error: ".
    public static func runSaying(_ program: String) async -> Never {
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            Foundation.exit(0)
        } catch {
            exitSaying(error, as: program)
        }
    }

    /// ArgumentParser's ending for `error` (help, a usage mistake, an exit status), its "Error: " said as
    /// "`program`: ". Help goes to standard output, the rest to standard error.
    public static func exitSaying(_ error: any Error, as program: String) -> Never {
        let code = exitCode(for: error)
        let message = fullMessage(for: error)
        let shown = message.hasPrefix("Error: ") ? program + ": " + message.dropFirst(7) : message
        if !shown.isEmpty {
            FileHandle(fileDescriptor: code == .success ? 1 : 2).write(Data((shown + "\n").utf8))
        }
        Foundation.exit(code.rawValue)
    }
}
