import DBus
import Foundation
import RecorderInterface
import ServiceLifecycle

/// Keeps the hub equal to the recorder for as long as the mirror runs: reaches the recorder's bus (again, should it
/// be missing or go away), follows the recorder there, sends the changed properties every 500 ms and a keep-alive
/// every 15 s.
public struct RecorderFollower: Service {
    public let link: RecorderLink
    public let hub: MirrorHub
    /// Runs each time the bus is reached (the mirror exports its own object on it).
    public let connected: @Sendable (DBusConnection) async -> Void
    /// Told why the bus cannot be reached (once per reason).
    public let lost: @Sendable (String) async -> Void
    /// The hub over DirCon, when the mirror serves one: told everything the screens are.
    public let dirCon: DirConHub?

    public init(
        link: RecorderLink, hub: MirrorHub, connected: @escaping @Sendable (DBusConnection) async -> Void = { _ in },
        lost: @escaping @Sendable (String) async -> Void = { _ in }, dirCon: DirConHub? = nil
    ) {
        self.link = link
        self.hub = hub
        self.connected = connected
        self.lost = lost
        self.dirCon = dirCon
    }

    public func run() async throws {
        // On SIGTERM the loops are cancelled and every stream is closed, so that the server can finish too.
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await link.run(connected: connected, lost: lost) { update in
                        await hub.apply(update)
                        await dirCon?.apply(update)
                    }
                }
                group.addTask { await every(.milliseconds(500)) { await hub.flushStatus() } }
                group.addTask { await every(.seconds(15)) { await hub.keepAlive() } }
                await group.next()
                group.cancelAll()
            }
        }
        await hub.closeAll()
        await dirCon?.closeAll()
    }

    private func every(_ interval: Duration, _ work: @Sendable () async -> Void) async {
        while (try? await Task.sleep(for: interval)) != nil { await work() }
    }
}
