import Foundation
import PostgresNIO
import TestSupport

@testable import RideSync

/// A real PostgreSQL server (Debian's postgresql-15) for the tests: a cluster made by `initdb` in a temporary
/// folder, run by an unprivileged user (nobody, when the tests run as root: PostgreSQL refuses root), listening
/// only on a Unix socket in that folder, trusting local logins; stopped and removed when the test process ends.
/// Each test makes a database of its own in it.
final class PostgresServer: Sendable {
    /// The server the tests share, started by the first test that asks for it.
    static var shared: PostgresServer { get async { await offThePool { sharedServer } } }

    private static let sharedServer: PostgresServer = {
        do {
            return try PostgresServer(withTLS: false, plainTCPAddress: nil, namespace: nil)
        } catch {
            fatalError("PostgreSQL could not be started for the tests (make test installs postgresql-15): \(error)")
        }
    }()

    let folder: String
    let binaries: String
    let socketFolder: String
    /// The unprivileged account the server runs as, nil when the tests are not root.
    let account: String?
    static let superuser = "cyclelog"

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// The TCP port it listens on besides its Unix socket: on the loopback with TLS for `withTLS` servers, on
    /// `plainTCPAddress` without for the others; nil: the Unix socket only.
    let tlsPort: Int?
    let tcpPort: Int?
    let namespace: String?

    /// A server of its own: for tests that stop and start it (the shared one serves tests running alongside).
    /// `plainTCPAddress`: also listening there without TLS, trusting logins from its /16 (a test network).
    /// `namespace`: the network namespace the server runs in (`NetworkCut`); its Unix socket is reached from
    /// anywhere on this machine all the same.
    static func started(withTLS: Bool = false, plainTCPAddress: String? = nil, namespace: String? = nil) async throws
        -> PostgresServer
    {
        try await offThePool {
            try PostgresServer(withTLS: withTLS, plainTCPAddress: plainTCPAddress, namespace: namespace)
        }
    }

    private init(withTLS: Bool, plainTCPAddress: String?, namespace: String?) throws {
        self.namespace = namespace
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else {
            throw Failed(description: "no PostgreSQL server in /usr/lib/postgresql")
        }
        binaries = "/usr/lib/postgresql/\(version)/bin"
        var template = Array("/tmp/cyclelog-postgres-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failed(description: "mkdtemp failed") }
        folder = String(cString: made)
        socketFolder = folder + "/socket"
        account = getuid() == 0 ? "nobody" : nil
        tlsPort = withTLS ? try Self.freeLoopbackPort() : nil
        if withTLS {
            tcpPort = tlsPort
        } else {
            tcpPort = plainTCPAddress == nil ? nil : try Self.freeLoopbackPort()
        }
        try FileManager.default.createDirectory(atPath: socketFolder, withIntermediateDirectories: true)
        if let account { try Self.run("/bin/chown", ["-R", "\(account):nogroup", folder]) }
        try asServer(
            "initdb",
            ["-D", folder + "/data", "-U", Self.superuser, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        if let tlsPort {
            // A certificate for localhost signed by a throw-away authority (tls/ca.crt), and a loopback port where
            // only TLS logins are let in.
            try TestCertificates.make(in: folder + "/tls")
            let data = folder + "/data"
            try FileManager.default.copyItem(atPath: folder + "/tls/server.crt", toPath: data + "/server.crt")
            try FileManager.default.copyItem(atPath: folder + "/tls/server.key", toPath: data + "/server.key")
            // Two roles log in with a password (made by `passwordRoles`): one asked for it in clear text, one by
            // SCRAM; the rest are trusted.
            try """
            local all all trust
            hostssl all \(Self.cleartextRole) 127.0.0.1/32 password
            hostssl all \(Self.scramRole) 127.0.0.1/32 scram-sha-256
            hostssl all all 127.0.0.1/32 trust
            hostnossl all all 127.0.0.1/32 reject

            """.write(toFile: data + "/pg_hba.conf", atomically: false, encoding: .utf8)
            try """
            listen_addresses = '127.0.0.1'
            port = \(tlsPort)
            ssl = on

            """.write(toFile: data + "/conf.d.tls", atomically: false, encoding: .utf8)
            let conf = try String(contentsOfFile: data + "/postgresql.conf", encoding: .utf8)
            try (conf + "include 'conf.d.tls'\n").write(
                toFile: data + "/postgresql.conf", atomically: false, encoding: .utf8)
            chmod(data + "/server.key", 0o600)
            if let account { try Self.run("/bin/chown", ["-R", "\(account):nogroup", folder]) }
        }
        if let plainTCPAddress, let tcpPort {
            let data = folder + "/data"
            try """
            local all all trust
            host all all \(plainTCPAddress)/16 trust

            """.write(toFile: data + "/pg_hba.conf", atomically: false, encoding: .utf8)
            let conf = try String(contentsOfFile: data + "/postgresql.conf", encoding: .utf8)
            try (conf + "listen_addresses = '\(plainTCPAddress)'\nport = \(tcpPort)\n").write(
                toFile: data + "/postgresql.conf", atomically: false, encoding: .utf8)
        }
        try startServer()
        // Stopped and removed when the test process ends, however it ends (a crash, a kill): a watchdog waits for it.
        let stop = (account.map { "/usr/sbin/runuser -u \($0) -- " } ?? "") + binaries + "/pg_ctl"
        try Self.run(
            "/bin/sh",
            [
                "-c",
                "(while kill -0 \(getpid()) 2>/dev/null; do sleep 0.5; done; \(stop) -D '\(folder)/data' -m immediate "
                    + "stop; rm -rf '\(folder)') >/dev/null 2>&1 &",
            ])
    }

    /// Starts the server again after `stopImmediately`.
    func start() async throws { try await offThePool { try self.startServer() } }

    private func startServer() throws {
        try asServer(
            "pg_ctl",
            [
                "-D", folder + "/data", "-l", folder + "/server.log", "-w", "-t", "60", "-o",
                "-k \(socketFolder) -c fsync=off -c max_connections=200"
                    + (tcpPort == nil ? " -c listen_addresses=''" : ""), "start",
            ])
    }

    /// A loopback TCP port nothing listens on now.
    static func freeLoopbackPort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else { throw Failed(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Stops the server as a crash or a pulled plug would: no clean shutdown.
    func stopImmediately() async throws { try await offThePool { try self.stopNow() } }

    private func stopNow() throws { try asServer("pg_ctl", ["-D", folder + "/data", "-m", "immediate", "-w", "stop"]) }

    /// `stopImmediately` on a thread of its own, not waited for: for a test's `defer`, which cannot wait.
    func stopLater() {
        Thread.detachNewThread { try? self.stopNow() }
    }

    /// The server's log, for a failing test's message.
    var log: String { (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? "" }

    /// Runs one of the server's programs as the server's account.
    func asServer(_ program: String, _ arguments: [String]) throws {
        var command = [binaries + "/" + program] + arguments
        if let account { command = ["/usr/sbin/runuser", "-u", account, "--"] + command }
        if let namespace { command = [NetworkCut.ip, "netns", "exec", namespace] + command }
        try Self.run(command[0], Array(command.dropFirst()))
    }

    /// Runs a program to its end; throws with its output when it fails.
    static func run(_ path: String, _ arguments: [String]) throws {
        let (status, output) = try runProgramNow(path, arguments)
        guard status == 0 else {
            throw Failed(description: "\(path) \(arguments.joined(separator: " ")) failed (\(status)): \(output)")
        }
    }

    /// The address of database `name` as the superuser.
    /// libpq's variables naming `database` on this server, for a `cyclelog-sync` process.
    func environment(_ database: String) -> [String: String] {
        [
            "PGHOST": socketFolder, "PGPORT": "\(tcpPort ?? 5432)", "PGUSER": Self.superuser, "PGDATABASE": database,
            "PGPASSFILE": "/dev/null",
        ]
    }

    func address(_ database: String = "postgres") -> ServerAddress {
        ServerAddress(
            endpoint: .unixSocket(path: socketFolder + "/.s.PGSQL.\(tcpPort ?? 5432)"), user: Self.superuser,
            database: database,
            password: nil, tlsMode: .disable, rootCertificatePath: nil)
    }

    /// The roles a TLS server asks for a password: in clear text, and by SCRAM-SHA-256.
    static let cleartextRole = "rider_cleartext"
    static let scramRole = "rider_scram"

    /// Makes both password roles, with `password`, allowed into every database.
    func passwordRoles(_ password: String) async throws {
        let admin = try await SharedStore.connect(address())
        for role in [Self.cleartextRole, Self.scramRole] {
            try await admin.execute(
                PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN SUPERUSER PASSWORD '\(password)'"))
        }
        await admin.close()
    }

    /// A new empty database for one test; the address carries its name.
    func newDatabase() async throws -> ServerAddress {
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try await SharedStore.connect(address())
        try await admin.execute(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        await admin.close()
        return address(name)
    }
}

/// Runs a program to its end from /tmp (the server's account may not enter the tests' folder) with its output in a
/// file (Foundation's Process can miss the exit of a program that leaves a daemon behind, as pg_ctl does): its exit
/// status (as `waitProgram` gives it, -1 when it hung) and output. Waited for off the concurrency pool.
func runProgram(
    _ path: String, _ arguments: [String], environment: [String: String] = [:]
) async throws -> (status: Int32, output: String) {
    try await offThePool { try runProgramNow(path, arguments, environment: environment) }
}

/// `runProgram`, holding the calling thread until the program ends.
func runProgramNow(
    _ path: String, _ arguments: [String], environment: [String: String] = [:]
) throws -> (status: Int32, output: String) {
    let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-run-\(UUID())").path
    defer { unlink(outputPath) }
    let pid = try spawnProgram(path, arguments, environment: environment, output: outputPath)
    let status = waitProgramNow(pid, seconds: 120)
    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    return (status ?? -1, status == nil ? "(killed after 120 s) " + output : output)
}

/// Starts a program from /tmp with `environment` added, its output (standard output and error) into the file
/// `output` or nowhere; its pid.
func spawnProgram(
    _ path: String, _ arguments: [String], environment: [String: String], output: String = "/dev/null"
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    // Nothing else of this process: a pipe another test has open at this moment would otherwise stay open in a
    // program that outlives it (the server, its watchdog), and the reader at its other end would wait for its end
    // until the test process ends — which the watchdog itself waits for.
    closeInheritedDescriptors(&actions)
    let settings = environment.map { "\($0.key)=\($0.value)" }
    let argv = (["/usr/bin/env", "-C", "/tmp"] + settings + [path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, nil, argv, environ)
    guard spawned == 0 else {
        throw PostgresServer.Failed(description: "\(path) could not be started: \(String(cString: strerror(spawned)))")
    }
    return pid
}

/// Waits for a program started by `spawnProgram`: its exit status, or 128 + the signal that ended it; nil when it
/// had not ended after `seconds` (it is then killed: a hang is a failure to report, not a test run that never ends).
/// Waited for off the concurrency pool.
func waitProgram(_ pid: pid_t, seconds: Double = 60) async -> Int32? {
    await offThePool { waitProgramNow(pid, seconds: seconds) }
}

/// `waitProgram`, holding the calling thread until the program ends.
func waitProgramNow(_ pid: pid_t, seconds: Double = 60) -> Int32? {
    var status: Int32 = 0
    let deadline = ContinuousClock.now + .seconds(seconds)
    while true {
        let ended = waitpid(pid, &status, WNOHANG)
        if ended == pid { break }
        if ended < 0 && errno != EINTR { return nil }
        if ContinuousClock.now > deadline {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            return nil
        }
        usleep(5_000)
    }
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
}
