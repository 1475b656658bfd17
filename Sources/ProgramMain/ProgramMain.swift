import ArgumentParser
import ExitStatus
import Formats
import Foundation
import Workouts

extension AsyncParsableCommand {
    /// Parses the command line and runs the command; every message it ends with starts "`program`: " (the form the
    /// reference documents, Docs/reference/exit-status.md), where ArgumentParser's own would start "Error: ".
    public static func runSaying(_ program: String, arguments: [String]? = nil) async -> Never {
        do {
            var command = try parseAsRoot(arguments)
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

    /// Ends the program for `error`. A library's error (`ExplainedError`) is said in its own words with its exit
    /// status, and, when `CYCLELOG_LOG_LEVEL` asks for debug or trace, with what the layer below said. Anything
    /// else is ArgumentParser's ending (help, a usage mistake, an exit status), its "Error: " said as
    /// "`program`: ". Help goes to standard output, the rest to standard error.
    public static func exitSaying(_ error: any Error, as program: String) -> Never {
        if let explained = error as? any ExplainedError {
            sayOnStandardError("\(program): \(explained.description)")
            if let cause = explained.cause, showsCauses { sayOnStandardError("  (underneath: \(cause))") }
            Foundation.exit(explained.exitStatus.rawValue)
        }
        let code = exitCode(for: error)
        let message = fullMessage(for: error)
        var shown = message.hasPrefix("Error: ") ? program + ": " + message.dropFirst(7) : message
        // A usage mistake quotes what was typed (`target $'250\e[2J'`): its control characters are shown escaped,
        // as every other message's are, never sent to the terminal.
        if code != .success { shown = ShownText.visible(shown, keepingLayout: true) }
        if !shown.isEmpty {
            FileHandle(fileDescriptor: code == .success ? 1 : 2).write(Data((shown + "\n").utf8))
        }
        Foundation.exit(code.rawValue)
    }
}

/// Whether a failure's underlying cause is written below it: `CYCLELOG_LOG_LEVEL` at debug or trace.
private var showsCauses: Bool {
    ["debug", "trace"].contains(ProcessInfo.processInfo.environment["CYCLELOG_LOG_LEVEL"]?.lowercased() ?? "")
}

/// Writes to standard output or standard error that never trap: a closed descriptor (`2>&-`), a full device
/// (`2>/dev/full`) or a reader that went away while SIGPIPE is ignored (systemd's default for services) loses the
/// text, never the ride. (`FileHandle.write` traps on any write error.)
public enum StandardStream: Sendable {
    case output
    case error

    public var descriptor: Int32 { self == .output ? STDOUT_FILENO : STDERR_FILENO }

    /// Writes all of `text` unbuffered, retrying short writes and interruptions; any other failure drops the rest.
    public func write(_ text: String) {
        write(Array(text.utf8))
    }

    public func write(_ all: [UInt8]) {
        all.withUnsafeBufferPointer { write($0) }
    }

    public func write(_ all: UnsafeBufferPointer<UInt8>) {
        var bytes = UnsafeRawBufferPointer(all)
        while !bytes.isEmpty {
            let written = Glibc.write(descriptor, bytes.baseAddress, bytes.count)
            if written > 0 {
                bytes = UnsafeRawBufferPointer(rebasing: bytes[written...])
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

/// A warning or an error on standard error: control characters from names, markers or files shown escaped,
/// each line at most 2000 characters.
public func sayOnStandardError(_ text: String) {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { ShownText.cut($0, to: 2000) }
    StandardStream.error.write(ShownText.visible(lines.joined(separator: "\n"), keepingLayout: true) + "\n")
}
