import Foundation
import PostgresNIO

/// Where the shared store is and how to log in, read as libpq reads it: a `postgres://` URL (without a password)
/// over the environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGPASSFILE`).
/// The password comes from systemd's credential `postgres-password`, `--password-file`, `PGPASSWORD` or the
/// password file, never from the command line.
public struct ServerAddress: Equatable, Sendable, CustomStringConvertible {
    public enum Endpoint: Equatable, Sendable {
        /// The socket file itself (`DIRECTORY/.s.PGSQL.PORT`).
        case unixSocket(path: String)
        case tcp(host: String, port: Int)
    }

    /// libpq's modes; on a Unix socket TLS is never used.
    public enum TLSMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    public var endpoint: Endpoint
    public var user: String
    public var database: String
    public var password: String?
    public var tlsMode: TLSMode
    public var rootCertificatePath: String?

    public var description: String {
        switch endpoint {
        case .unixSocket(let path): "\(user)@\(database) on \(path)"
        case .tcp(let host, let port): "\(user)@\(host):\(port)/\(database) (TLS \(tlsMode.rawValue))"
        }
    }

    public struct AddressError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads the address. `url` is `--postgres`; `passwordFile` is `--password-file`.
    public static func resolve(
        url: String?, passwordFile: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(AddressError) -> ServerAddress {
        func setting(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        var host = setting("PGHOST")
        var port = setting("PGPORT")
        var user = setting("PGUSER")
        var database = setting("PGDATABASE")
        var sslMode = setting("PGSSLMODE")
        var rootCertificate = setting("PGSSLROOTCERT")
        if let url {
            guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme ?? "")
            else {
                throw AddressError(description: "--postgres takes a URL such as postgres://rider@host:5432/cyclelog")
            }
            if parts.password != nil {
                throw AddressError(
                    description: "--postgres must not carry a password (anyone on this machine can read a command "
                        + "line): put it in a password file (PGPASSFILE, ~/.pgpass), --password-file or the "
                        + "service's credential postgres-password")
            }
            if let value = parts.percentEncodedHost?.removingPercentEncoding, !value.isEmpty { host = value }
            if let value = parts.port { port = String(value) }
            if let value = parts.user, !value.isEmpty { user = value }
            let path = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
            if !path.isEmpty { database = path }
            for item in parts.queryItems ?? [] {
                switch item.name {
                case "host": host = item.value
                case "port": port = item.value
                case "user": user = item.value
                case "dbname": database = item.value
                case "sslmode": sslMode = item.value
                case "sslrootcert": rootCertificate = item.value
                default:
                    throw AddressError(
                        description: "--postgres: the parameter \(item.name) is not one cyclelog-sync reads")
                }
            }
        }
        guard let portNumber = Int(port ?? "5432"), (1...65535).contains(portNumber) else {
            throw AddressError(description: "the PostgreSQL port \(port ?? "") is not a port number")
        }
        let userName = user ?? setting("USER") ?? "postgres"
        let directory = host ?? "/var/run/postgresql"
        let endpoint: Endpoint =
            directory.hasPrefix("/")
            ? .unixSocket(path: directory + "/.s.PGSQL.\(portNumber)") : .tcp(host: directory, port: portNumber)
        guard let mode = TLSMode(rawValue: sslMode ?? "require") else {
            throw AddressError(
                description: "sslmode \(sslMode ?? "") is not one of "
                    + TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        var address = ServerAddress(
            endpoint: endpoint, user: userName, database: database ?? userName, password: nil, tlsMode: mode,
            rootCertificatePath: rootCertificate)
        address.password = try password(for: address, file: passwordFile, environment: environment)
        return address
    }

    /// The password, from the first place that has one.
    static func password(
        for address: ServerAddress, file: String?, environment: [String: String]
    ) throws(AddressError) -> String? {
        func firstLine(_ path: String, what: String) throws(AddressError) -> String {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw AddressError(description: "\(what) \(path) cannot be read")
            }
            return String(text.prefix { $0 != "\n" && $0 != "\r" })
        }
        // The unit's `SetCredential=postgres-password:` makes the credential empty when its file is missing: then the
        // server takes no password (a Unix socket with peer authentication) or ~/.pgpass has it.
        if let directory = environment["CREDENTIALS_DIRECTORY"],
            FileManager.default.fileExists(atPath: directory + "/postgres-password")
        {
            let credential = try firstLine(directory + "/postgres-password", what: "the credential")
            if !credential.isEmpty { return credential }
        }
        if let file { return try firstLine(file, what: "the password file") }
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        let passFile =
            environment["PGPASSFILE"] ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.pgpass"
        guard let text = try? String(contentsOfFile: passFile, encoding: .utf8) else { return nil }
        let host: String
        let port: Int
        switch address.endpoint {
        case .unixSocket(let path):
            host = "localhost"
            port = Int(path.split(separator: ".").last ?? "") ?? 5432
        case .tcp(let name, let number):
            host = name
            port = number
        }
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = passFileFields(line)
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), address.database, address.user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// A password file's line: five fields split at unescaped colons, `\:` and `\\` unescaped.
    static func passFileFields(_ line: Substring) -> [String] {
        var fields: [String] = []
        var field = ""
        var escaped = false
        for character in line {
            if escaped {
                field.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }

    /// Whether the login needs `LoginGuard`: a password goes over TCP to a server whose certificate is not checked.
    var guardsLogin: Bool {
        guard case .tcp = endpoint, password != nil else { return false }
        return tlsMode != .verifyCA && tlsMode != .verifyFull
    }

    /// The connection's configuration for PostgresNIO; over `channel`, a TCP connection already made (with its
    /// `LoginGuard`).
    func configuration(over channel: (any Channel)? = nil) throws -> PostgresConnection.Configuration {
        switch endpoint {
        case .unixSocket(let path):
            return .init(unixSocketPath: path, username: user, password: password, database: database)
        case .tcp(let host, let port):
            var tls = TLSConfiguration.makeClientConfiguration()
            let mode: PostgresConnection.Configuration.TLS
            switch tlsMode {
            case .disable, .allow, .prefer, .require: tls.certificateVerification = .none
            case .verifyCA: tls.certificateVerification = .noHostnameVerification
            case .verifyFull: tls.certificateVerification = .fullVerification
            }
            if tlsMode == .disable {
                mode = .disable
            } else {
                if let rootCertificatePath { tls.trustRoots = .file(rootCertificatePath) }
                let context = try NIOSSLContext(configuration: tls)
                mode = tlsMode == .allow || tlsMode == .prefer ? .prefer(context) : .require(context)
            }
            guard let channel else {
                return .init(host: host, port: port, username: user, password: password, database: database, tls: mode)
            }
            var configuration = PostgresConnection.Configuration(
                establishedChannel: channel, tls: mode, username: user, password: password, database: database)
            // As PostgresNIO names the server for a connection it makes: by its name, never by an address (SNI).
            if !host.contains(":") && !host.allSatisfy({ $0.isNumber || $0 == "." }) {
                configuration.options.tlsServerName = host
            }
            return configuration
        }
    }
}
