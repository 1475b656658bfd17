import DBus
import NIOCore
import NIOPosix
import SensorHub
import ServiceLifecycle

/// DirCon's TCP side: listens on the address it is told, hands each connection's messages to the `DirConHub` and
/// writes back what the hub sends it. No authentication exists in DirCon: whoever reaches the port is an app
/// (Docs/guide/second-screen.md, "The hub over DirCon").
public enum DirConServer {
    /// Serves on `host`:`port` until the calling task is cancelled; `bound` is told the address it listens on (its
    /// port chosen by the system for port 0).
    public static func run(
        host: String, port: Int, hub: DirConHub, bound: @Sendable (SocketAddress) async -> Void
    ) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // DirCon is a request and answer at a time, and each notification matters at once: no Nagle delay.
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        if let address = server.channel.localAddress { await bound(address) }
        try await withThrowingDiscardingTaskGroup { connections in
            try await server.executeThenClose { inbound in
                for try await connection in inbound {
                    connections.addTask { await serve(connection, hub: hub) }
                }
            }
        }
    }

    /// One app's connection, until it closes it, sends what is not DirCon, or the hub lets it go.
    static func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, hub: DirConHub) async {
        let app = connection.channel.remoteAddress.map(label) ?? "an app"
        // A slow app loses the oldest of what it has not taken yet, never holds the hub back.
        let (outgoing, send) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        guard await hub.joined(app, send: send) else {
            try? await connection.channel.close()
            return
        }
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask {
                        for await bytes in outgoing { try await outbound.write(ByteBuffer(bytes: bytes)) }
                    }
                    tasks.addTask {
                        var reader = DirConReader()
                        for try await buffer in inbound {
                            for message in try reader.take(buffer.readableBytesView) {
                                await hub.received(message, from: app)
                            }
                        }
                    }
                    // Either side ending ends the connection.
                    try await tasks.next()
                    tasks.cancelAll()
                }
            }
        } catch let error as DirConError {
            hub.say("the DirCon connection of \(app) was closed: \(error.description)")
        } catch {}
        await hub.left(app)
    }

    /// An app as the recorder names it: its address and port ("192.168.1.20:50123", "[fe80::1]:50123").
    static func label(_ address: SocketAddress) -> String {
        let host = address.ipAddress ?? "?"
        return (host.contains(":") ? "[\(host)]" : host) + ":\(address.port ?? 0)"
    }
}

/// The DirCon hub as one of the mirror's services: served on its address, announced by mDNS once it listens
/// (withdrawn when the mirror stops), ended with the mirror.
public struct DirConService: Service {
    public let host: String
    public let port: Int
    public let name: String
    public let hub: DirConHub

    public init(host: String, port: Int, name: String, hub: DirConHub) {
        self.host = host
        self.port = port
        self.name = name
        self.hub = hub
    }

    public func run() async throws {
        let announcement = Announcement()
        let (hub, name) = (hub, name)
        try await cancelWhenGracefulShutdown {
            try await DirConServer.run(host: host, port: port, hub: hub) { address in
                let bound = address.port ?? 0
                hub.say("the hub is served over DirCon on \(DirConServer.label(address)) as \"\(name)\"")
                do throws(DBusError) {
                    let txt = DirConAnnouncement.txt(
                        services: HubService.hub(passingControl: true), macAddress: DirConAnnouncement.macAddress(),
                        serialNumber: name)
                    await announcement.keep(try await DirConAnnouncement.announce(name: name, port: bound, txt: txt))
                    hub.say("announced by mDNS as \(DirConAnnouncement.serviceType) \"\(name)\" on port \(bound)")
                } catch {
                    hub.say(error.message)
                }
            }
        }
    }

    /// The bus connection avahi's entry lives on, kept for as long as the hub is served.
    actor Announcement {
        private var connection: DBusConnection?
        func keep(_ connection: DBusConnection) { self.connection = connection }
    }
}
