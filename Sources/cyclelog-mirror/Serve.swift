import ArgumentParser
import CMalloc
import DBus
import ExitStatus
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import Mirror
import ProgramMain
import RecorderInterface
import WorkoutStore

/// `cyclelog-mirror` (`serve`): follows the recorder and serves the paired screens.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serves the page and the API (the default).")

    @OptionGroup var control: ControlBusOptions

    @Option(
        help:
            "Where to listen, ADDRESS:PORT. 0.0.0.0:8787 (every interface) lets phones on the network in; they still need pairing."
    )
    var listen = "127.0.0.1:8787"

    @Option(
        name: .customLong("state-dir"),
        help: "Where the paired devices are kept (default: $STATE_DIRECTORY, else ~/.local/state/cyclelog).")
    var stateDirectory: String?

    @Option(help: "At most this many open streams (screens).")
    var maxClients = 16

    @Option(help: "Members of this group may pair and revoke devices, besides the mirror's own user and root.")
    var controlGroup: String?

    @Option(help: "The ride database whose history is served, read-only (default: $CYCLELOG_DB, else cyclelog's).")
    var db: String?

    @Option(
        help: ArgumentHelp(
            "Serve HTTPS with this certificate (PEM, the chain from the server's own certificate up), with --tls-key.",
            discussion: "Phones keep the screen on (Wake Lock) only on a secure page.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The certificate's private key (PEM).", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "Serve the sensor hub over DirCon (Zwift on Apple TV, Windows, macOS) on ADDRESS:PORT (36866 is DirCon's).",
            discussion:
                "Off by default. DirCon has no authentication: anyone who reaches the port reads the ride (heart rate "
                + "included) and can steer the trainer within cyclelog's safety rules.", valueName: "address:port"))
    var dircon: String?

    @Option(help: "The name the DirCon hub is announced with by mDNS (1 to 63 bytes).")
    var dirconName = "cyclelog"

    func validate() throws {
        guard Self.split(listen) != nil else {
            throw ValidationError("--listen takes ADDRESS:PORT (127.0.0.1:8787, 0.0.0.0:8787, [::]:8787)")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together: the certificate and its private key")
        }
        guard (1...1024).contains(maxClients) else { throw ValidationError("--max-clients takes 1 to 1024") }
        if let dircon, Self.split(dircon) == nil {
            throw ValidationError("--dircon takes ADDRESS:PORT (192.168.1.10:36866, 0.0.0.0:36866)")
        }
        // An mDNS instance name is one DNS label: at most 63 bytes (RFC 6763, 4.1.1).
        guard (1...63).contains(dirconName.utf8.count), dirconName.allSatisfy({ !$0.isNewline }) else {
            throw ValidationError("--dircon-name takes 1 to 63 bytes on one line")
        }
    }

    static func split(_ listen: String) -> (host: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(listen[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// `--state-dir`, else systemd's `$STATE_DIRECTORY`, else `$XDG_STATE_HOME/cyclelog`, else
    /// `$HOME/.local/state/cyclelog` (the XDG rules: an empty or relative value counts as unset; `$HOME` before the
    /// password database's home directory).
    var devicesFile: URL {
        let environment = ProcessInfo.processInfo.environment
        func absolute(_ name: String) -> String? { environment[name].flatMap { $0.hasPrefix("/") ? $0 : nil } }
        let folder =
            stateDirectory ?? absolute("STATE_DIRECTORY")
            ?? (absolute("XDG_STATE_HOME") ?? (absolute("HOME") ?? NSHomeDirectory()) + "/.local/state") + "/cyclelog"
        return URL(fileURLWithPath: folder).appendingPathComponent("mirror-devices.json")
    }

    func run() async throws {
        // A block of 256 kB or more (a long ride's samples, its chart) is mapped for itself and unmapped when freed,
        // as glibc does by default only until the first such block is freed: after that it raises the threshold
        // and keeps megabytes in its heap that a history request held for a moment.
        mallopt(M_MMAP_THRESHOLD, 256 * 1024)
        let (host, port) = Self.split(listen)!
        let tls = try tlsConfiguration()
        let devices: DeviceRegistry
        do { devices = try DeviceRegistry(file: devicesFile) } catch {
            throw CommandFailure("cannot read the paired devices in \(devicesFile.path): \(error)")
        }
        let bus = control.address
        // The history is served whatever the bus: a missing one is reached when it appears (`RecorderLink`).
        let link = RecorderLink(bus: bus, meanwhile: "the ride history is served meanwhile")
        let hub = MirrorHub(maximumClients: maxClients)
        let responder = MirrorResponder(
            hub: hub, devices: devices, recorder: link, requestGuard: .machine(),
            history: HistoryAPI(databasePath: db ?? WorkoutStore.defaultPath()), secure: tls != nil)
        var logger = Logger(label: "cyclelog-mirror")
        logger.logLevel = .notice
        let pairingHost = Self.pairingHost(host)
        Self.raiseDescriptorLimit()
        // A connection that has sent no complete request within `idleSeconds` (nothing at all, or headers a
        // byte at a time) is closed; an answer being written (a stream) is not idle. One address holds at most
        // `perAddress` connections: a stranger's flood cannot take the sockets the paired screens need.
        let counts = ConnectionCounts()
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [counts.handler()], idleTimeout: .seconds(Self.idleSeconds))
        let server: HTTPServerBuilder
        do {
            server =
                try tls.map { try .tls(.http1(configuration: http), tlsConfiguration: $0) }
                ?? .http1(configuration: http)
        } catch {
            throw CommandFailure("cannot serve TLS with \(tlsCert ?? ""): \(error)")
        }
        let scheme = tls == nil ? "http" : "https"
        let pairingBase = PairingBase()
        var application = Application(
            responder: responder,
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                let base = "\(scheme)://\(pairingHost):\(bound)"
                await pairingBase.set(base)
                Self.announce(
                    "cyclelog-mirror: serving \(base) (recorder on \(bus)); pair a screen with `cyclelog-mirror pair`")
            }, logger: logger)
        // Each time the bus is reached, the mirror's own object (pairing, devices, revoking) is exported there.
        let controlGroup = controlGroup
        let dirConHub = dircon.map { _ in
            DirConHub(recorder: { (method, arguments) throws(DBusError) in try await link.hub(method, arguments) }) {
                Self.announce("cyclelog-mirror: \($0)")
            }
        }
        let follower = RecorderFollower(
            link: link, hub: hub,
            connected: { connection in
                do {
                    try await MirrorControl.export(
                        on: connection, devices: devices, hub: hub, pairingBase: await pairingBase.value(),
                        controlGroup: controlGroup)
                } catch {
                    Self.announce("cyclelog-mirror: \(error) — `cyclelog-mirror pair` will not reach this one")
                }
            },
            lost: { reason in Self.announce("cyclelog-mirror: \(reason)") }, dirCon: dirConHub)
        application.addServices(follower)
        if let dircon, let dirConHub, let (host, port) = Self.split(dircon) {
            application.addServices(DirConService(host: host, port: port, name: dirconName, hub: dirConHub))
        }
        do { try await application.runService() } catch {
            throw CommandFailure("cannot serve on \(listen): \(error)")
        }
    }

    /// The server side of TLS from `--tls-cert` and `--tls-key`; nil without them.
    func tlsConfiguration() throws -> TLSConfiguration? {
        guard let tlsCert, let tlsKey else { return nil }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(tlsCert)
        } catch {
            throw CommandFailure("cannot read the TLS certificate \(tlsCert) (PEM): \(error)")
        }
        guard !chain.isEmpty else { throw CommandFailure("\(tlsCert) holds no certificate (PEM)") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: tlsKey, format: .pem)
        } catch {
            throw CommandFailure("cannot read the TLS private key \(tlsKey) (PEM): \(error)")
        }
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    /// How long a connection may stay without a complete request (Docs/guide/second-screen.md, "Limits").
    static let idleSeconds: Int64 = 15

    /// The soft limit on open descriptors raised to the hard one (systemd leaves services at 1 024 soft,
    /// 524 288 hard): a connection is a descriptor, and running out of them makes the server spin on `accept`.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// A line on standard output at once, not when a buffer fills: scripts and tests wait for "serving".
    static func announce(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The address a phone uses in the pairing URL: the listening one, or for every interface the machine's first
    /// non-loopback IPv4 address.
    static func pairingHost(_ host: String) -> String {
        guard host == "0.0.0.0" || host == "::" else { return host.contains(":") ? "[\(host)]" : host }
        let addresses = RequestGuard.interfaceAddresses()
        return addresses.first { !$0.contains(":") && !$0.hasPrefix("127.") } ?? "127.0.0.1"
    }
}

/// The address pairing links start with, known once the server listens (its port may be chosen by the system).
actor PairingBase {
    private var base: String?
    private var waiting: [CheckedContinuation<String, Never>] = []

    func set(_ value: String) {
        base = value
        for continuation in waiting { continuation.resume(returning: value) }
        waiting = []
    }

    func value() async -> String {
        if let base { return base }
        return await withCheckedContinuation { waiting.append($0) }
    }
}
