import Foundation

/// A network that can be cut: a network namespace joined to this one by a veth pair (10.231.N.2 inside,
/// 10.231.N.1 here). A program run inside reaches a server listening on `hostAddress`; `cut()` takes this side's
/// end down, as a Wi-Fi out of reach or a pulled cable does: no reset, packets simply stop. Removed when the test
/// process ends, however it ends.
final class NetworkCut: Sendable {
    let namespace: String
    let hostInterface: String
    /// The end inside the namespace.
    let inner: String
    let hostAddress: String

    /// Network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2.
    static var possible: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: ip) }
    static let ip = "/usr/sbin/ip"

    init() throws {
        let tag = Int(getpid()) % 10_000
        namespace = "cyclelog-cut-\(tag)"
        hostInterface = "clcut\(tag)h"
        inner = "clcut\(tag)n"
        let subnet = "10.231.\(tag % 250)"
        hostAddress = subnet + ".1"
        for arguments in [
            ["netns", "add", namespace],
            ["link", "add", hostInterface, "type", "veth", "peer", "name", inner],
            ["link", "set", inner, "netns", namespace],
            ["addr", "add", hostAddress + "/30", "dev", hostInterface],
            ["link", "set", hostInterface, "up"],
            ["-n", namespace, "addr", "add", subnet + ".2/30", "dev", inner],
            ["-n", namespace, "link", "set", inner, "up"],
            ["-n", namespace, "link", "set", "lo", "up"],
        ] {
            try PostgresServer.run(Self.ip, arguments)
        }
        try PostgresServer.run(
            "/bin/sh",
            [
                "-c",
                "(while kill -0 \(getpid()) 2>/dev/null; do sleep 0.5; done; \(Self.ip) link del \(hostInterface); "
                    + "\(Self.ip) netns del \(namespace)) >/dev/null 2>&1 &",
            ])
    }

    /// The command line that runs `program` inside the namespace.
    func inside(_ program: String, _ arguments: [String]) -> (String, [String]) {
        (Self.ip, ["netns", "exec", namespace, program] + arguments)
    }

    func cut() throws { try PostgresServer.run(Self.ip, ["link", "set", hostInterface, "down"]) }

    /// Brings this side's end up again and waits until the link carries packets: both ends operational, and
    /// neither side remembering the other as unreachable (an address resolution that failed while the link was
    /// down is kept as FAILED for seconds, and a new connection meanwhile fails at once).
    func restore() throws {
        try PostgresServer.run(Self.ip, ["link", "set", hostInterface, "up"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let here = (try? runProgram(Self.ip, ["-o", "link", "show", "dev", hostInterface]))?.output ?? ""
            let there = (try? runProgram(Self.ip, ["-n", namespace, "-o", "link", "show", "dev", inner]))?.output ?? ""
            if here.contains("state UP") && there.contains("state UP") { break }
            usleep(20_000)
        }
        _ = try? runProgram(Self.ip, ["neigh", "flush", "dev", hostInterface])
        _ = try? runProgram(Self.ip, ["-n", namespace, "neigh", "flush", "dev", inner])
    }

    func remove() {
        _ = try? runProgram(Self.ip, ["link", "del", hostInterface])
        _ = try? runProgram(Self.ip, ["netns", "del", namespace])
    }
}
