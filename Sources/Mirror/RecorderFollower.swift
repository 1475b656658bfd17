import DBus
import Foundation
import ServiceLifecycle

/// Keeps the hub equal to the recorder for as long as the mirror runs: follows it on its bus, sends the changed
/// properties every 500 ms and a keep-alive every 15 s.
public struct RecorderFollower: Service {
    public let link: RecorderLink
    public let hub: MirrorHub

    public init(link: RecorderLink, hub: MirrorHub) {
        self.link = link
        self.hub = hub
    }

    public func run() async throws {
        // On SIGTERM the loops are cancelled and every stream is closed, so that the server can finish too.
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await follow() }
                    group.addTask { await every(.milliseconds(500)) { await hub.flushStatus() } }
                    group.addTask { await every(.seconds(15)) { await hub.keepAlive() } }
                    defer { group.cancelAll() }
                    try await group.next()
                }
            }
        } catch {
            await hub.closeAll()
            throw error
        }
        await hub.closeAll()
    }

    /// Follows the recorder for as long as the bus is there. When the bus itself goes (the session ended, the
    /// system bus restarted) the mirror stops with an error: the mirror's own D-Bus object and every link went
    /// with it, and systemd's `Restart=on-failure` starts a fresh mirror, to which the phones reconnect.
    private func follow() async throws {
        do {
            try await link.follow { update in await hub.apply(update) }
        } catch {
            await hub.apply(.gone)
            throw error
        }
    }

    private func every(_ interval: Duration, _ work: @Sendable () async -> Void) async {
        while (try? await Task.sleep(for: interval)) != nil { await work() }
    }
}
