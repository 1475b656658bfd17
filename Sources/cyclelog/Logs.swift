import Foundation
import Logging

/// swift-log to standard error (journald keeps it under systemd), quiet by default: warnings and errors only.
/// `CYCLELOG_LOG_LEVEL` (trace, debug, info, notice, warning, error, critical) or `record --verbose` (debug)
/// shows more. What a rider needs to see is never a log line: it stays in the commands' plain messages.
enum Logs {
    static func bootstrap(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let level = environment["CYCLELOG_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level ?? .warning
            return handler
        }
    }

    /// A logger for one part of cyclelog; `verbose` lowers its level to debug.
    static func logger(_ label: String, verbose: Bool = false) -> Logger {
        var logger = Logger(label: "cyclelog." + label)
        if verbose { logger.logLevel = min(logger.logLevel, .debug) }
        return logger
    }
}
