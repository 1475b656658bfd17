import ExitStatus
import Formats
import Foundation
import Logging
import PostgresNIO
import Synchronization
import WorkoutStore
import Workouts

/// One connection to the shared PostgreSQL store. Queries are plain SQL with bound values; what the rows mean is
/// `Synchronizer`'s.
public final class SharedStore: Sendable {
    let connection: PostgresConnection
    let logger: Logger
    /// How long one request may wait for its answer before the connection is taken for lost.
    let replySeconds: Double

    /// A network that goes away mid-request (a Wi-Fi out of reach, a cable pulled) sends no reset: without a
    /// deadline a request would wait for ever. A minute carries a one-hour ride's journal (about 2 MB) over a
    /// link of 300 kbit/s.
    public static let defaultReplySeconds = 60.0

    private init(connection: PostgresConnection, logger: Logger, replySeconds: Double) {
        self.connection = connection
        self.logger = logger
        self.replySeconds = replySeconds
    }

    /// Connects and logs in, or says in words why not.
    public static func connect(
        _ address: ServerAddress, replySeconds: Double = defaultReplySeconds
    ) async throws(SyncError) -> SharedStore {
        // PostgresNIO logs each connection's life at debug level; the messages here say what matters.
        let logger = Logger(label: "cyclelog-sync") { _ in SwiftLogNoOpLogHandler() }
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try address.configuration()
        } catch {
            throw SyncError.unreachable(address, error)
        }
        let verdict = LoginGuard.Verdict()
        // The login is a request too: a network gone between the TCP handshake and the server's answer would
        // otherwise hold it for ever.
        let login = await firstOf(seconds: replySeconds) {
            guard address.guardsLogin, case .tcp(let host, let port) = address.endpoint else {
                return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            }
            // The TCP connection made here, so that `LoginGuard` watches it from its first byte.
            let requestsTLS = address.tlsMode != .disable
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            LoginGuard(requestsTLS: requestsTLS, verdict: verdict))
                    }
                }
                .connect(host: host, port: port).get()
            return try await PostgresConnection.connect(
                on: channel.eventLoop, configuration: try address.configuration(over: channel), id: 1, logger: logger)
        }
        if verdict.refused {
            throw SyncError(
                .refused,
                "the shared store \(address) asked for the password in clear text over a connection whose certificate "
                    + "was not checked (sslmode=\(address.tlsMode.rawValue)); it was not sent: anyone between here and "
                    + "the server could be asking. Check the certificate with sslmode=verify-full (in the URL, or "
                    + "PGSSLMODE) and the authority that signed it (sslrootcert=FILE or PGSSLROOTCERT), or have the "
                    + "server ask for scram-sha-256 (pg_hba.conf)")
        }
        switch login {
        case .success(let connection)?:
            return SharedStore(connection: connection, logger: logger, replySeconds: replySeconds)
        case .failure(let error)?:
            throw SyncError.unreachable(address, error)
        case nil:
            throw SyncError(
                .unreachable, "cannot reach the shared store \(address): no answer within \(Int(replySeconds)) s")
        }
    }

    /// Closes the connection, waiting at most 5 s (closing a connection whose network is gone may never end).
    public func close() async {
        let connection = self.connection
        _ = await firstOf(seconds: 5) { try await connection.close() }
    }

    /// Connects, runs `body`, and closes the connection however `body` ends.
    public static func with<T>(
        _ address: ServerAddress, replySeconds: Double = defaultReplySeconds,
        _ body: (SharedStore) async throws(SyncError) -> T
    ) async throws(SyncError) -> T {
        let store = try await connect(address, replySeconds: replySeconds)
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }

    /// Refuses to send on a connection the server has closed: PostgresNIO 1.33 leaves a query written to a closed
    /// connection waiting for ever (found by the tests that stop the server in the middle of a push).
    private func checkOpen() throws(SyncError) {
        if connection.isClosed {
            throw SyncError(.unreachable, "the connection to the shared store was lost: the server closed it")
        }
    }

    /// Runs `query` and decodes its rows as `columns`.
    func rows<each Column: PostgresDecodable & Sendable>(
        _ query: PostgresQuery, as columns: (repeat each Column).Type
    ) async throws(SyncError) -> [(repeat each Column)] {
        try checkOpen()
        let (connection, logger) = (self.connection, self.logger)
        return try await answered {
            var rows: [(repeat each Column)] = []
            for try await row in try await connection.query(query, logger: logger).decode(columns) {
                rows.append(row)
            }
            return rows
        }
    }

    /// Runs a statement whose rows do not matter.
    func execute(_ query: PostgresQuery) async throws(SyncError) {
        try checkOpen()
        let (connection, logger) = (self.connection, self.logger)
        try await answered { _ = try await connection.query(query, logger: logger) }
    }

    /// Has the values this connection writes compressed with LZ4 where the server has it (PostgreSQL 14 and later
    /// built with it, as Debian's packages and PostgreSQL's own are), for the rest of the session. The server
    /// compresses each long value it stores (TOAST), and with its default, pglz, compressing the journals was most of
    /// a push's time on the server: a first sync of 200 one-hour rides took 5.1 s with it and 2.9 s with LZ4, for 12 %
    /// more bytes stored (Benchmarks/results.md). Any client reads either kind; the schema is unchanged, and a server
    /// without LZ4 keeps its default.
    func preferFastCompression() async throws(SyncError) {
        try await execute(
            """
            SELECT set_config('default_toast_compression', 'lz4', false) FROM pg_settings
            WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)
            """)
    }

    /// `request`'s result, or the connection closed when no answer came within `replySeconds`.
    private func answered<T: Sendable>(
        _ request: @escaping @Sendable () async throws -> T
    ) async throws(SyncError) -> T {
        switch await firstOf(seconds: replySeconds, request) {
        case .success(let value)?: return value
        case .failure(let error)?: throw SyncError.server(error)
        case nil:
            let connection = self.connection
            // Closing may never end either (the connection's state is what failed): it is left to finish alone.
            Task { try? await connection.close() }
            throw SyncError(
                .unreachable,
                "the shared store did not answer within \(Int(replySeconds)) s (the network to it, or the server, is "
                    + "gone); what it did not acknowledge goes at the next sync")
        }
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<Result: Sendable>(
        _ body: (SharedStore) async throws(SyncError) -> Result
    ) async throws(SyncError) -> Result {
        try await execute("BEGIN")
        do {
            let result = try await body(self)
            try await execute("COMMIT")
            return result
        } catch {
            try? await execute("ROLLBACK")
            throw error
        }
    }
}

/// The result of `work`, or nil when `seconds` passed first. `work` runs as a task of its own, not a child: PostgresNIO
/// 1.33 may never end a query on a connection that went away, not even once the connection is closed (found by the
/// fault tests), and a child task that never ends holds its parent for ever. Such a task is left behind; the
/// program's exit ends it.
func firstOf<T: Sendable>(
    seconds: Double, _ work: @escaping @Sendable () async throws -> T
) async -> Result<T, any Error>? {
    await withCheckedContinuation { continuation in
        let first = FirstResult<T>(continuation)
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            if !Task.isCancelled { first.finish(nil) }
        }
        Task {
            let result: Result<T, any Error>
            do {
                result = .success(try await work())
            } catch {
                result = .failure(error)
            }
            first.finish(result)
            timer.cancel()
        }
    }
}

/// Resumes its continuation once, with whichever result comes first.
private final class FirstResult<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<T, any Error>?, Never>?>

    init(_ continuation: CheckedContinuation<Result<T, any Error>?, Never>) {
        self.continuation = Mutex(continuation)
    }

    func finish(_ result: Result<T, any Error>?) {
        continuation.withLock { waiting in
            waiting?.resume(returning: result)
            waiting = nil
        }
    }
}

/// Why a sync could not be done, in words a rider understands.
public struct SyncError: ExplainedError {
    public enum Kind: Sendable {
        /// The server could not be reached or refused the login: try again later (the back-off).
        case unreachable
        /// The server answered with an error.
        case server
        /// The server has no cyclelog schema, or a newer one.
        case schema
        /// A rider, ride or conflict that is not there, or a request that cannot be carried out.
        case refused
        /// The local database.
        case local
    }

    public var kind: Kind
    public var description: String
    /// What PostgreSQL or the connection said (its SQLSTATE and message, or the socket's error), for logs.
    public var cause: String?

    /// 75 ("try again later") when the server could not be reached, as the back-off and the timer expect; 2 for
    /// the local database; 1 for what the server refused.
    public var exitStatus: ExitStatus {
        switch kind {
        case .unreachable: .tryLater
        case .local: .cannotUse
        case .server, .schema, .refused: .failed
        }
    }

    /// The description is cut to `longestDescription` characters: a server's message is outside input, and one of
    /// 64 MB must neither fill the terminal nor the database's sync status.
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = ShownText.cut(description, to: Self.longestDescription)
    }

    public static let longestDescription = 2000

    /// The local database failed: its words, prefixed with `context`, and its own cause.
    static func local(_ error: StoreError, _ context: String? = nil) -> SyncError {
        var failure = SyncError(.local, (context.map { $0 + ": " } ?? "") + error.description)
        failure.cause = error.cause
        return failure
    }

    static func unreachable(_ address: ServerAddress, _ error: any Error) -> SyncError {
        var failure = SyncError(.unreachable, "cannot reach the shared store \(address): \(reason(error))")
        failure.cause = cause(of: error)
        return failure
    }

    static func server(_ error: any Error) -> SyncError {
        var failure =
            if let error = error as? PSQLError, error.serverInfo == nil {
                SyncError(.unreachable, "the connection to the shared store was lost: \(reason(error))")
            } else {
                SyncError(.server, "the shared store refused: \(reason(error))")
            }
        failure.cause = cause(of: error)
        return failure
    }

    /// PostgresNIO's error code with the server's SQLSTATE, or the socket's error: never the query or its values
    /// (they may hold what is not for logs).
    static func cause(of error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(type(of: error)): \(error)" }
        var parts = ["PSQLError \(error.code)"]
        if let state = error.serverInfo?[.sqlState] { parts.append("SQLSTATE \(state)") }
        if let underlying = error.underlying { parts.append("\(type(of: underlying)): \(underlying)") }
        return parts.joined(separator: ", ")
    }

    /// PostgresNIO's errors say little in their description (on purpose: a query may hold secrets): the server's
    /// own message, or the socket's error, is what a rider needs.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else {
            if let error = error as? IOError { return error.description }
            return "\(error)"
        }
        if let info = error.serverInfo, let message = info[.message] {
            return message + (info[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying { return reason(underlying) }
        switch error.code {
        case .serverClosedConnection, .uncleanShutdown: return "the server closed the connection"
        case .sslUnsupported:
            return "the server does not offer TLS (sslmode=disable turns it off, on a trusted network)"
        case .connectionError: return "the connection failed"
        default: return "\(error.code)"
        }
    }
}
