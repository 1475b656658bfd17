import Foundation

/// Writes to standard output or standard error that never trap: a closed descriptor (`2>&-`), a full device
/// (`2>/dev/full`) or a reader that went away while SIGPIPE is ignored (systemd's default for services) loses the
/// text, never the ride. (`FileHandle.write` traps on any write error.)
enum StandardStream {
    case output
    case error

    var descriptor: Int32 { self == .output ? STDOUT_FILENO : STDERR_FILENO }

    /// Writes all of `text` unbuffered, retrying short writes and interruptions; any other failure drops the rest.
    func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

/// A warning or an error line on standard error.
func printError(_ text: String) {
    StandardStream.error.write(text + "\n")
}
