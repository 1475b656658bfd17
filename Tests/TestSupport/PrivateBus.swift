import Foundation

/// A private `dbus-daemon` for one test: its own socket in a temporary folder, its own policy, stopped when
/// the value is released. Nothing in a test touches the machine's system or session bus.
public final class PrivateBus: @unchecked Sendable {
    /// `unix:path=…`, for `--bus` and `CYCLELOG_DBUS_ADDRESS`.
    public let address: String
    public let folder: URL
    private let daemon: ChildProcess

    /// `denySendingTo` names bus names that nobody may call (as a strict system policy would), for AccessDenied;
    /// `serviceDirectories` hold activation files (`*.service`) the bus starts services from. `folder` is where its
    /// socket (`bus`) goes, as `$XDG_RUNTIME_DIR/bus` for a session bus found there; a fresh one by default.
    public init(denySendingTo denied: [String] = [], serviceDirectories: [String] = [], folder: URL? = nil) throws {
        let folder =
            folder ?? FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-bus-\(UUID().uuidString)")
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let socket = folder.appendingPathComponent("bus").path
        address = "unix:path=\(socket)"
        let denials = denied.map { "    <deny send_destination=\"\($0)\"/>\n" }.joined()
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
            \(serviceDirectories.map { "  <servicedir>\($0)</servicedir>\n" }.joined())              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                <allow user="*"/>
            \(denials)  </policy>
            </busconfig>
            """
        let configPath = folder.appendingPathComponent("bus.conf")
        try config.write(to: configPath, atomically: true, encoding: .utf8)
        // Its output in a file of its own: a daemon left behind by a test process that crashed must not hold the
        // test runner's output open (the runner waits for it to close, and the whole run with it).
        daemon = try ChildProcess(
            ["/usr/bin/dbus-daemon", "--config-file=\(configPath.path)", "--nofork", "--nopidfile"],
            outputPath: folder.appendingPathComponent("bus.log").path)
        // The daemon is ready when its socket accepts a connection: the file appears at bind(), a moment before
        // listen(), and a client connecting in between is refused.
        let deadline = Date().addingTimeInterval(10)
        while !Self.acceptsConnections(socket) {
            guard Date() < deadline, daemon.isRunning else {
                throw NSError(
                    domain: "PrivateBus", code: 1,
                    userInfo: [
                        NSLocalizedDescriptionKey: "dbus-daemon did not start (is the dbus-daemon package installed?)"
                    ])
            }
            usleep(10_000)
        }
    }

    /// Stops the daemon now (a session that ends, a restarted system bus); the folder stays until release.
    public func stop() { daemon.stop() }

    private static func acceptsConnections(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return withUnixSocketAddress(path) { connect(descriptor, $0, $1) } == 0
    }

    deinit {
        daemon.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Calls `body` (`connect`, `bind`) with `path` as an AF_UNIX socket address and its length; a path longer than
/// `sun_path` holds is cut.
public func withUnixSocketAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8.prefix(MemoryLayout.size(ofValue: address.sun_path) - 1))
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// A child process started with posix_spawn and stopped with a signal. Foundation's `Process.waitUntilExit`
/// spins on a thread without a run loop, which test threads are.
/// Adds to a spawn's actions the closing of every descriptor but the standard three (glibc's
/// `posix_spawn_file_actions_addclosefrom_np`, 2.34, declared only under `_GNU_SOURCE`, which Swift's Glibc module
/// leaves out: looked up by name). Without it a child inherits whatever the test process has open at that moment,
/// such as the write end of a pipe another test is feeding a program: that program then never sees its input end
/// while the child lives, and a child that outlives the test (a server, its watchdog) keeps it forever.
public func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
        fatalError("glibc 2.34 or later is needed: posix_spawn_file_actions_addclosefrom_np is missing")
    }
    _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
}

public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private var status: Int32?

    /// Starts `arguments[0]` (an absolute path) with the rest as arguments and extra environment variables.
    public init(_ arguments: [String], environment: [String: String] = [:], outputPath: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let outputPath {
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        closeInheritedDescriptors(&actions)
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // The child must not inherit the signal mask of a test thread (dispatch blocks signals on its threads),
        // or SIGTERM and SIGINT would stay pending in it forever.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw NSError(
                domain: "ChildProcess", code: Int(result),
                userInfo: [
                    NSLocalizedDescriptionKey: "cannot start \(arguments[0]): \(String(cString: strerror(result)))"
                ])
        }
        pid = child
    }

    public var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid {
            status = raw
            return false
        }
        return true
    }

    /// Sends a signal (SIGINT, SIGTERM, SIGKILL…).
    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// Stops the process (SIGSTOP) and returns once all of it has stopped, or false after `seconds`. `kill` only
    /// starts the stop: each thread stops when it is next scheduled, so on a busy machine one of them can go on for
    /// a few milliseconds, long enough to answer a call. The kernel tells the parent when the last one has.
    public func freeze(seconds: Double = 5) async -> Bool {
        guard isRunning, kill(pid, SIGSTOP) == 0 else { return false }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var raw: Int32 = 0
            if waitpid(pid, &raw, WUNTRACED | WNOHANG) == pid {
                // WIFSTOPPED: the low byte is 0x7F; anything else means it has ended.
                guard raw & 0xFF == 0x7F else {
                    status = raw
                    return false
                }
                return true
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// Lets a frozen process run again (SIGCONT).
    public func thaw() {
        if isRunning { kill(pid, SIGCONT) }
    }

    /// Waits for the process to end, up to a limit; returns its exit code (128 + signal when killed), or nil.
    @discardableResult
    public func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            if Date() > deadline { return nil }
            usleep(20_000)
        }
        guard let status else { return nil }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    public func stop() {
        signal(SIGTERM)
        if wait(seconds: 5) == nil {
            signal(SIGKILL)
            wait(seconds: 5)
        }
    }

    deinit {
        stop()
    }
}
