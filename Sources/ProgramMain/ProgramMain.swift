import ArgumentParser
import Dispatch
import ExitStatus
import Formats
import Foundation
import Workouts

/// The version the three programs report (`--version`): one project, one number.
public enum ProgramVersion {
    public static let text = "0.20.0"
}

extension AsyncParsableCommand {
    /// A mistyped command (`cyclelog lsit`) named with the nearest one, when one is a slip away (at most two
    /// letters added, dropped, changed or swapped), instead of ArgumentParser's "unexpected argument".
    static func suggestion(for arguments: [String], program: String) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), first.count <= 40 else { return nil }
        let names = configuration.subcommands.map { $0._commandName }.filter { !$0.isEmpty }
        guard !names.isEmpty, !names.contains(first) else { return nil }
        let near = names.map { ($0, editDistance(first.lowercased(), $0)) }.filter { $0.1 <= 2 }
            .min { ($0.1, $0.0) < ($1.1, $1.0) }
        return near.map {
            "\(program): '\(ShownText.visible(first))' is not a command; did you mean `\(program) \($0.0)`? "
                + "(`\(program) --help` lists them)"
        }
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    /// Parses the command line and runs the command; every message it ends with starts "`program`: " (the form the
    /// reference documents, Docs/reference/exit-status.md), where ArgumentParser's own would start "Error: ".
    /// A synchronous command (`list`, `show`, `decode`, `--version`, a usage mistake) runs here, on the main thread,
    /// without starting the concurrency runtime: its threads, the hop to one and libdispatch's timer thread cost a
    /// short command a tenth of its time. An asynchronous one (`record`, `replay`, `serve`) runs on the runtime, which
    /// the main thread then serves (`dispatchMain`) until the command ends the process.
    public static func runSaying(_ program: String, arguments: [String]? = nil) -> Never {
        let command = parsedSaying(program, arguments: arguments)
        guard let asynchronous = command as? any AsyncParsableCommand else {
            do {
                var synchronous = command
                try synchronous.run()
                Foundation.exit(0)
            } catch {
                exitSaying(error, as: program)
            }
        }
        // The program's one unstructured task: the command itself, which ends the process when it is done.
        Task {
            var command = asynchronous
            do {
                try await command.run()
                Foundation.exit(0)
            } catch {
                exitSaying(error, as: program)
            }
        }
        dispatchMain()
    }

    /// The command the command line names, or the end of the program with what was wrong with it (help and
    /// `--version` end it too).
    private static func parsedSaying(_ program: String, arguments: [String]?) -> any ParsableCommand {
        let words = arguments ?? Array(CommandLine.arguments.dropFirst())
        do {
            return try parseAsRoot(arguments)
        } catch {
            // Only a command line that did not parse is looked at for a slip (a command's name is not worked out
            // at every start).
            if let first = words.first, fullMessage(for: error).contains("Unexpected argument '\(first)'"),
                let suggestion = suggestion(for: words, program: program)
            {
                sayOnStandardError(suggestion)
                Foundation.exit(ExitCode.validationFailure.rawValue)
            }
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

extension ExitStatus {
    /// Ends a command whose output has already said what went wrong (a report, a checklist, a batch's lines) with
    /// this status and nothing more on standard error.
    public var saidAlready: ExitCode { ExitCode(rawValue) }
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
