import Foundation
import Recording
import RideTestSupport
import TestSupport

/// The stand-in of intervals.icu's and Strava's APIs (Tests/ServiceStandIn/training_services.py) on a port of
/// 127.0.0.1, for one test: what it holds, what it found wrong in the requests it got, the faults it is to inject.
final class ServiceStandIn: @unchecked Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ServiceStandIn/training_services.py").path
    static let apiKey = "intervalskey0123456789"
    static let athlete = "i134815"
    static let clientId = "4242"
    static let clientSecret = "stravasecret0123456789"

    let port: Int
    /// Where the test's own requests go (the same port, unless the services are served over TLS).
    let controlPort: Int
    private let pid: pid_t
    private let output: String

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts the stand-in and waits for the ports it listens on (off the concurrency pool).
    static func started(_ arguments: [String] = []) async throws -> ServiceStandIn {
        try await offThePool { try ServiceStandIn(arguments) }
    }

    private init(_ arguments: [String]) throws {
        output = FileManager.default.temporaryDirectory.appendingPathComponent("standin-\(UUID())").path
        pid = try spawnProgram("python3", [Self.script, "--port", "0"] + arguments, environment: [:], output: output)
        let deadline = Date().addingTimeInterval(20)
        while true {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first,
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let port = object["port"] as? Int, let controlPort = object["controlPort"] as? Int
            {
                self.port = port
                self.controlPort = controlPort
                return
            }
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                throw Failed(description: "the services' stand-in did not start: \(text)")
            }
            usleep(50_000)
        }
    }

    deinit {
        kill(pid, SIGTERM)
        unlink(output)
        // Reaped on a thread of its own: a deinit cannot wait, and the stand-in ends within milliseconds.
        let pid = pid
        Thread.detachNewThread { _ = waitProgramNow(pid, seconds: 5) }
    }

    var address: String { "http://127.0.0.1:\(port)" }

    /// Everything the stand-in holds and saw.
    func state() throws -> [String: Any] {
        let answer = try HTTPConnection.request(port: controlPort, "GET", "/_standin/state")
        guard let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any] else {
            throw Failed(description: "the stand-in's state is not JSON: \(answer.body)")
        }
        return object
    }

    func control(_ path: String, _ value: Any = [String: Any]()) throws {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
        _ = try HTTPConnection.request(
            port: controlPort, "POST", "/_standin/" + path, headers: ["Content-Type": "application/json"], body: body)
    }

    /// How many answers the stand-in has held so far (a cheap question, asked often while a run goes on).
    func held() throws -> Int {
        let answer = try HTTPConnection.request(port: controlPort, "GET", "/_standin/held")
        return (try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["held"] as? Int ?? 0
    }

    func activities(_ service: String) throws -> [[String: Any]] { try state()[service] as? [[String: Any]] ?? [] }
    func violations() throws -> [String] { try state()["violations"] as? [String] ?? [] }
    /// Every token and code the stand-in handed out.
    func issued() throws -> [String] { try state()["issued"] as? [String] ?? [] }
}

/// A collector with accounts on the stand-in, and `cyclelog-sync` run against them.
struct UploadRig {
    let collector: Collector
    let standIn: ServiceStandIn
    let folder: String

    /// A collector with `rides` of the fixtures' rides and a stand-in of the services.
    static func made(rides: Int = 2) async throws -> UploadRig {
        let rig = UploadRig(collector: try Collector(), standIn: try await ServiceStandIn.started())
        for (day, journal) in Fixtures.journals.prefix(rides).enumerated() { try rig.ride(journal, onDay: day + 1) }
        return rig
    }

    init(collector: Collector, standIn: ServiceStandIn) {
        self.collector = collector
        self.standIn = standIn
        folder = (collector.path as NSString).deletingLastPathComponent
    }

    /// Replays a fixture journal moved to 2000-01-DAY: the fixtures all start on the same morning, and a service
    /// takes two rides that start at the same time for one (Strava's "duplicate of activity").
    func ride(_ journal: String, onDay day: Int) throws {
        let text = try String(contentsOfFile: Fixtures.folder + "/" + journal, encoding: .utf8)
        let path = folder + "/day\(day)-" + (journal as NSString).lastPathComponent
        try text.replacingOccurrences(of: "2000-01-01T", with: String(format: "2000-01-%02dT", day))
            .write(toFile: path, atomically: true, encoding: .utf8)
        _ = try Replayer(store: collector.store).replay(try CaptureFile.load(path))
    }

    func sync(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runProgram(try builtBinary("cyclelog-sync").path, arguments + ["--db", collector.path])
    }

    /// A file only its owner reads, holding `secret`.
    func secretFile(_ name: String, _ secret: String, mode: mode_t = 0o600) throws -> String {
        let path = folder + "/" + name
        try (secret + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    func addIntervals() async throws {
        let key = try secretFile("intervals-key", ServiceStandIn.apiKey)
        let added = try await sync([
            "account", "add", "intervals", "--athlete", ServiceStandIn.athlete, "--api-key-file", key, "--address",
            standIn.address, "--since", "1990-01-01",
        ])
        guard added.status == 0 else { throw ServiceStandIn.Failed(description: added.output) }
    }

    /// The Strava account through its OAuth flow: the authorization page's address read from the program's output,
    /// opened on the stand-in (which approves at once), its redirect followed to the program's loopback listener.
    func addStrava(stranger: ((Int) throws -> Void)? = nil) async throws {
        let secret = try secretFile("strava-secret", ServiceStandIn.clientSecret)
        let output = folder + "/add-strava.out"
        let pid = try spawnProgram(
            try builtBinary("cyclelog-sync").path,
            [
                "account", "add", "strava", "--db", collector.path, "--client-id", ServiceStandIn.clientId,
                "--client-secret-file", secret, "--address", standIn.address, "--since", "1990-01-01", "--timeout",
                "30",
            ], environment: [:], output: output)
        var url: String?
        for _ in 0..<200 where url == nil {
            try await Task.sleep(for: .milliseconds(50))
            url = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
                .first { $0.hasPrefix("http://") }.map(String.init)
        }
        guard let url, let components = URLComponents(string: url),
            let redirect = components.queryItems?.first(where: { $0.name == "redirect_uri" })?.value,
            let listener = URLComponents(string: redirect)?.port
        else {
            kill(pid, SIGKILL)
            throw ServiceStandIn.Failed(
                description:
                    "no authorization address: \(String(describing: try? String(contentsOfFile: output, encoding: .utf8)))"
            )
        }
        try stranger?(listener)
        let target = url.replacingOccurrences(of: standIn.address, with: "")
        let approval = try HTTPConnection.request(port: standIn.port, "GET", target)
        guard approval.status == 302, let location = approval.headers["location"],
            let back = URLComponents(string: location)
        else { throw ServiceStandIn.Failed(description: "the stand-in did not send the browser back") }
        let landed = try HTTPConnection.request(
            port: listener, "GET", back.percentEncodedPath + "?" + (back.percentEncodedQuery ?? ""))
        guard landed.status == 200, landed.body.contains("cyclelog is authorized") else {
            throw ServiceStandIn.Failed(description: "the listener answered \(landed.status): \(landed.body)")
        }
        let status = await waitProgram(pid, seconds: 30)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else { throw ServiceStandIn.Failed(description: "account add strava: \(text)") }
    }

    /// The external id a ride's version is uploaded with: its sync identifier and version.
    func externalId(_ id: Int64) throws -> String {
        guard let summary = try collector.store.ride(id, analysed: false)?.summary else {
            throw ServiceStandIn.Failed(description: "no workout \(id)")
        }
        return "\(summary.syncIdentifier.lowercased())-v\(summary.version)"
    }

    func syncIdentifier(_ id: Int64) throws -> String {
        guard let summary = try collector.store.ride(id, analysed: false)?.summary else {
            throw ServiceStandIn.Failed(description: "no workout \(id)")
        }
        return summary.syncIdentifier.lowercased()
    }
}
