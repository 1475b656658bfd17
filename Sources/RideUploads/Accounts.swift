import ExitStatus
import Foundation
import Workouts

/// A training service rides are uploaded to.
public enum Service: String, CaseIterable, Sendable, Codable {
    case intervals, strava

    /// Its name as riders know it.
    public var title: String {
        switch self {
        case .intervals: "intervals.icu"
        case .strava: "Strava"
        }
    }

    /// Where it is, unless the account says otherwise (a stand-in in tests, a proxy).
    public var defaultAddress: String {
        switch self {
        case .intervals: "https://intervals.icu"
        case .strava: "https://www.strava.com"
        }
    }
}

/// An intervals.icu account: the athlete and the personal API key (Settings → Developer Settings).
public struct IntervalsAccount: Codable, Equatable, Sendable {
    public var athlete: String
    public var apiKey: String
    public var address: String
    /// Rides that start from then on are uploaded by every sync; older ones on request (`upload ID`).
    public var addedMicroseconds: Int64
    /// The data types its files are written without (`--without hr`), by name; none when absent.
    public var without: [String]?

    public init(athlete: String, apiKey: String, address: String, addedMicroseconds: Int64) {
        self.athlete = athlete
        self.apiKey = apiKey
        self.address = address
        self.addedMicroseconds = addedMicroseconds
    }
}

/// A Strava account: the rider's own API application (client id and secret) and the tokens its OAuth 2
/// authorization gave. Strava's refresh token may change at each refresh, so the file is written again then.
public struct StravaAccount: Codable, Equatable, Sendable {
    public var clientId: String
    public var clientSecret: String
    public var refreshToken: String
    public var accessToken: String?
    /// When the access token stops working, in seconds since 1970 (Strava's `expires_at`).
    public var expiresAt: Int64
    public var athlete: String?
    public var address: String
    public var addedMicroseconds: Int64
    /// The data types its files are written without (`--without hr`), by name; none when absent.
    public var without: [String]?

    public init(
        clientId: String, clientSecret: String, refreshToken: String, accessToken: String?, expiresAt: Int64,
        athlete: String?, address: String, addedMicroseconds: Int64
    ) {
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.athlete = athlete
        self.address = address
        self.addedMicroseconds = addedMicroseconds
    }
}

/// The data types a service's files may be written without: what a ride's file holds.
public enum LeftOut {
    public static let types = DataType.measured

    /// `--without`'s list (`hr`, `hr,cadence`; `none` for nothing left out), checked.
    public static func parse(_ text: String) throws(UploadError) -> Set<DataType> {
        if text == "none" || text.isEmpty { return [] }
        switch DataType.list(text) {
        case .success(let named) where named.isSubset(of: types): return named
        case .success(let named):
            throw UploadError(
                "--without takes what a ride's file holds (\(DataType.text(types))), not "
                    + DataType.text(named.subtracting(types)), .usage)
        case .failure(let error): throw UploadError("--without: \(error)", .usage)
        }
    }

    /// An account's list as types (a name this version does not know names nothing its files hold).
    public static func types(_ names: [String]?) -> Set<DataType> {
        Set((names ?? []).compactMap(DataType.init))
    }

    /// "without hr, cadence" for a rider; empty when nothing is left out.
    public static func words(_ names: [String]?) -> String {
        guard let names, !names.isEmpty else { return "" }
        let known = DataType.text(types(names))
        return "without "
            + (known.isEmpty ? names.joined(separator: ",") : known).replacingOccurrences(of: ",", with: ", ")
    }
}

/// The folder of the accounts' files: one file per service (`intervals.json`, `strava.json`), each readable and
/// writable by the rider alone (0600, in a 0700 folder); a file anyone else could read is refused, not used. For
/// the service, systemd's credentials `intervals-api-key` and `strava-client-secret` take the place of the key and
/// the secret. Nothing of these files goes to a log, an error, a process title or the database.
public struct AccountFolder: Sendable {
    public let path: String
    let credentialsDirectory: String?

    /// `path`: `--accounts`, else `accounts/` beside the database.
    public init(path: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.path = path
        credentialsDirectory = environment["CREDENTIALS_DIRECTORY"]
    }

    /// The folder beside a database file.
    public static func beside(database: String) -> String {
        let folder = (database as NSString).deletingLastPathComponent
        return (folder.isEmpty ? "." : folder) + "/accounts"
    }

    public func file(_ service: Service) -> String { path + "/\(service.rawValue).json" }

    public func intervals() throws(UploadError) -> IntervalsAccount? {
        guard var account = try read(IntervalsAccount.self, .intervals) else { return nil }
        if let key = try credential("intervals-api-key") { account.apiKey = key }
        return account
    }

    public func strava() throws(UploadError) -> StravaAccount? {
        guard var account = try read(StravaAccount.self, .strava) else { return nil }
        if let secret = try credential("strava-client-secret") { account.clientSecret = secret }
        return account
    }

    /// The services with an account here.
    public func services() -> [Service] {
        Service.allCases.filter { FileManager.default.fileExists(atPath: file($0)) }
    }

    public func save(_ account: IntervalsAccount) throws(UploadError) { try write(account, .intervals) }
    public func save(_ account: StravaAccount) throws(UploadError) { try write(account, .strava) }

    /// Forgets a service's account; false when there was none.
    public func remove(_ service: Service) throws(UploadError) -> Bool {
        guard FileManager.default.fileExists(atPath: file(service)) else { return false }
        guard unlink(file(service)) == 0 else {
            throw UploadError("\(file(service)) cannot be removed: \(String(cString: strerror(errno)))", .cannotUse)
        }
        return true
    }

    /// Holds the folder's lock while `body` runs: one upload at a time per collector (a second `cyclelog-sync`,
    /// started by the timer while the path unit's runs, would otherwise send the same ride), and a refreshed token
    /// written by one at a time. Waits up to `waitSeconds` for another run to finish.
    public func locked<T>(waitSeconds: Double = 60, _ body: () async throws -> T) async throws -> T {
        try makeFolder()
        let descriptor = open(path + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw UploadError("\(path)/.lock cannot be opened: \(String(cString: strerror(errno)))", .cannotUse)
        }
        defer { close(descriptor) }
        let deadline = Date().addingTimeInterval(waitSeconds)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else {
                throw UploadError(
                    "another cyclelog-sync is uploading from this collector; try again when it has finished",
                    .tryLater)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }

    /// The first line of a file only its owner can read: a key or a secret given with `--…-file`; `-` reads it
    /// from standard input (`< FILE`, a pipe from a password manager), never from the command line.
    public static func secret(fromFile path: String, what: String) throws(UploadError) -> String {
        if path == "-" {
            guard let line = readLine(strippingNewline: true).map(firstLine), !line.isEmpty else {
                throw UploadError("\(what): nothing came on standard input", .failed)
            }
            return line
        }
        try checkPrivate(path, what: what)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw UploadError("\(what) \(path) cannot be read", .cannotUse)
        }
        let line = firstLine(text)
        guard !line.isEmpty else { throw UploadError("\(what) \(path) is empty", .failed) }
        return line
    }

    /// Refuses a file that someone other than its owner may read or write.
    static func checkPrivate(_ path: String, what: String) throws(UploadError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw UploadError("\(what) \(path) cannot be read: \(String(cString: strerror(errno)))", .cannotUse)
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw UploadError(
                "\(what) \(path) can be read by other users (mode \(String(mode, radix: 8))); make it yours alone "
                    + "with `chmod 600 \(path)`", .cannotUse)
        }
    }

    private func credential(_ name: String) throws(UploadError) -> String? {
        guard let directory = credentialsDirectory, FileManager.default.fileExists(atPath: directory + "/" + name)
        else { return nil }
        guard let text = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8) else {
            throw UploadError("the credential \(name) cannot be read", .cannotUse)
        }
        let line = firstLine(text)
        return line.isEmpty ? nil : line
    }

    private func read<Account: Decodable>(_ type: Account.Type, _ service: Service) throws(UploadError) -> Account? {
        let path = file(service)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        try Self.checkPrivate(path, what: "the \(service.title) account file")
        guard let data = FileManager.default.contents(atPath: path),
            let account = try? JSONDecoder().decode(Account.self, from: data)
        else {
            throw UploadError(
                "the \(service.title) account file \(path) is damaged; add the account again "
                    + "(`cyclelog-sync account add \(service.rawValue)`)", .cannotUse)
        }
        return account
    }

    /// Written whole or not at all: a new file made 0600 from its first byte, synced, then renamed over the old.
    private func write<Account: Encodable>(_ account: Account, _ service: Service) throws(UploadError) {
        try makeFolder()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(account) else {
            throw UploadError("the \(service.title) account cannot be written", .failed)
        }
        let temporary = file(service) + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw UploadError("\(temporary) cannot be written: \(String(cString: strerror(errno)))", .cannotUse)
        }
        let written = data.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == data.count, synced == 0, rename(temporary, file(service)) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw UploadError("\(file(service)) cannot be written: \(reason)", .cannotUse)
        }
    }

    private func makeFolder() throws(UploadError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & 0o077 == 0 || info.st_uid != geteuid() || chmod(path, 0o700) == 0 else {
                throw UploadError("\(path) cannot be made private: \(String(cString: strerror(errno)))", .cannotUse)
            }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw UploadError("\(path) cannot be made: \(error.localizedDescription)", .cannotUse)
        }
    }
}

/// A failure of an upload, an account or a plan, in a rider's words, with its exit status (75: try again later).
public struct UploadError: ExplainedError, Sendable {
    public var description: String
    public var exitStatus: ExitStatus

    public init(_ description: String, _ exitStatus: ExitStatus = .failed) {
        self.description = description
        self.exitStatus = exitStatus
    }
}

/// Keeps secrets out of what is shown: a service's message may quote the request it refused.
public struct Redaction: Sendable {
    private var secrets: [String]

    public init(_ secrets: [String?]) {
        self.secrets = secrets.compactMap { $0 }.filter { $0.count >= 4 }
    }

    public func apply(_ text: String) -> String {
        secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: "[secret]") }
    }
}

/// Secrets that grow during a run (Strava's refreshed tokens), read from any task.
final class SecretList: @unchecked Sendable {
    private let lock = NSLock()
    private var secrets: [String?]

    init(_ secrets: [String?]) { self.secrets = secrets }

    func add(_ more: [String?]) { lock.withLock { secrets += more } }

    var redaction: Redaction { lock.withLock { Redaction(secrets) } }
}

/// A file's first line without its surrounding white space (a line may end in "\r\n", one Character in Swift).
func firstLine(_ text: String) -> String {
    String(text.prefix { !$0.isNewline }).trimmingCharacters(in: .whitespaces)
}
