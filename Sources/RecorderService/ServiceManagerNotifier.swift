import Foundation
import LiveRecording

/// Tells systemd how the service is doing, as `sd_notify(3)` does: one datagram per message to the AF_UNIX
/// socket named by `$NOTIFY_SOCKET` (a path, or `@name` for an abstract socket). `Type=notify` waits for
/// `READY=1`; with `WatchdogSec=` systemd restarts the service when `WATCHDOG=1` stops arriving.
public struct ServiceManagerNotifier: Sendable {
    let socketPath: String
    /// How often systemd expects `WATCHDOG=1` at the latest (`$WATCHDOG_USEC`); nil without a watchdog.
    public let watchdogInterval: Duration?

    /// Nil when not started by systemd with `Type=notify` (no `$NOTIFY_SOCKET`).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        socketPath = path
        // $WATCHDOG_PID says which process the watchdog is meant for; a child that inherited it must not answer.
        let forUs = environment["WATCHDOG_PID"].flatMap { pid_t($0) }.map { $0 == getpid() } ?? true
        watchdogInterval = environment["WATCHDOG_USEC"].flatMap { Int64($0) }.flatMap { $0 > 0 && forUs ? $0 : nil }
            .map { .microseconds($0) }
    }

    /// Sends one message (`READY=1`, `WATCHDOG=1`, `STATUS=…`, `STOPPING=1`); false when it could not be sent.
    /// Never waits: a listener that does not read must not stall the recorder (a full queue drops the message).
    @discardableResult
    public func notify(_ message: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        // An abstract socket's name starts with a NUL byte where the environment has '@'.
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), socketAddress, length)
            }
        }
        return sent == bytes.count
    }
}
