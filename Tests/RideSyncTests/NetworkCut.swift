import Foundation
import TestSupport

/// A network that can be cut: two network namespaces joined by a veth pair, the client's (10.231.N.2) and the
/// server's (10.231.N.1). A program run inside the client's reaches a server started in the server's
/// (`PostgresServer(namespace:)`) at `serverAddress`; `cut()` takes the server's end down, as a Wi-Fi out of reach
/// or a pulled cable does: no reset, packets simply stop. Nothing of it is in this machine's own namespace, whose
/// links and addresses never change: a browser in a test running alongside takes any change there for a new
/// network and fails its requests (`ERR_NETWORK_CHANGED`). Removed when the test process ends, however it ends.
final class NetworkCut: Sendable {
    /// The namespace of the program under test.
    let client: String
    /// The namespace of the server.
    let server: String
    let clientInterface: String
    let serverInterface: String
    let serverAddress: String

    /// Network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2.
    static var possible: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: ip) }
    static let ip = "/usr/sbin/ip"

    /// Makes the namespaces and the pair (a dozen `ip` commands, waited for off the concurrency pool).
    static func made() async throws -> NetworkCut { try await offThePool { try NetworkCut() } }

    private init() throws {
        let tag = Int(getpid()) % 10_000
        client = "cyclelog-cut-\(tag)c"
        server = "cyclelog-cut-\(tag)s"
        clientInterface = "clcut\(tag)c"
        serverInterface = "clcut\(tag)s"
        let subnet = "10.231.\(tag % 250)"
        serverAddress = subnet + ".1"
        for arguments in [
            ["netns", "add", client],
            ["netns", "add", server],
            // Made inside the client's namespace with its peer in the server's: never in this one, even for a moment.
            [
                "-n", client, "link", "add", clientInterface, "type", "veth", "peer", "name", serverInterface, "netns",
                server,
            ],
            ["-n", client, "addr", "add", subnet + ".2/30", "dev", clientInterface],
            ["-n", client, "link", "set", clientInterface, "up"],
            ["-n", client, "link", "set", "lo", "up"],
            ["-n", server, "addr", "add", serverAddress + "/30", "dev", serverInterface],
            ["-n", server, "link", "set", serverInterface, "up"],
            ["-n", server, "link", "set", "lo", "up"],
        ] {
            try PostgresServer.run(Self.ip, arguments)
        }
        try PostgresServer.run(
            "/bin/sh",
            [
                "-c",
                "(while kill -0 \(getpid()) 2>/dev/null; do sleep 0.5; done; \(Self.ip) netns del \(client); "
                    + "\(Self.ip) netns del \(server)) >/dev/null 2>&1 &",
            ])
    }

    /// The command line that runs `program` inside the client's namespace.
    func inside(_ program: String, _ arguments: [String]) -> (String, [String]) {
        (Self.ip, ["netns", "exec", client, program] + arguments)
    }

    func cut() async throws {
        try await offThePool {
            try PostgresServer.run(Self.ip, ["-n", self.server, "link", "set", self.serverInterface, "down"])
        }
    }

    /// Brings the server's end up again and waits until the link carries packets: both ends operational, and
    /// neither side remembering the other as unreachable (an address resolution that failed while the link was
    /// down is kept as FAILED for seconds, and a new connection meanwhile fails at once).
    func restore() async throws {
        try await offThePool { try self.restoreNow() }
    }

    private func restoreNow() throws {
        try PostgresServer.run(Self.ip, ["-n", server, "link", "set", serverInterface, "up"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let ends = [(server, serverInterface), (client, clientInterface)].map { namespace, interface in
                (try? runProgramNow(Self.ip, ["-n", namespace, "-o", "link", "show", "dev", interface]))?.output ?? ""
            }
            if ends.allSatisfy({ $0.contains("state UP") }) { break }
            usleep(20_000)
        }
        _ = try? runProgramNow(Self.ip, ["-n", server, "neigh", "flush", "dev", serverInterface])
        _ = try? runProgramNow(Self.ip, ["-n", client, "neigh", "flush", "dev", clientInterface])
    }

    /// Deletes both namespaces, and the pair with them (a server still running keeps its own until it ends).
    /// On a thread of its own, not waited for: it is called from a test's `defer`, which cannot wait.
    func remove() {
        let (client, server) = (client, server)
        Thread.detachNewThread {
            _ = try? runProgramNow(Self.ip, ["netns", "del", client])
            _ = try? runProgramNow(Self.ip, ["netns", "del", server])
        }
    }
}
