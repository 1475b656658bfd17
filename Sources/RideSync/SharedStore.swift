import Foundation
import Logging
import PostgresNIO

/// One connection to the shared PostgreSQL store. Queries are plain SQL with bound values; what the rows mean is
/// `Synchronizer`'s.
public final class SharedStore: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    private init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Connects and logs in, or says in words why not.
    public static func connect(_ address: ServerAddress) async throws(SyncError) -> SharedStore {
        // PostgresNIO logs each connection's life at debug level; the messages here say what matters.
        let logger = Logger(label: "cyclelog-sync") { _ in SwiftLogNoOpLogHandler() }
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try address.configuration(), id: 1, logger: logger)
            return SharedStore(connection: connection, logger: logger)
        } catch {
            throw SyncError.unreachable(address, error)
        }
    }

    public func close() async {
        try? await connection.close()
    }

    /// Connects, runs `body`, and closes the connection however `body` ends.
    public static func with<T>(
        _ address: ServerAddress, _ body: (SharedStore) async throws(SyncError) -> T
    ) async throws(SyncError) -> T {
        let store = try await connect(address)
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
        do {
            var rows: [(repeat each Column)] = []
            for try await row in try await connection.query(query, logger: logger).decode(columns) {
                rows.append(row)
            }
            return rows
        } catch {
            throw SyncError.server(error)
        }
    }

    /// Runs a statement whose rows do not matter.
    func execute(_ query: PostgresQuery) async throws(SyncError) {
        try checkOpen()
        do {
            try await connection.query(query, logger: logger)
        } catch {
            throw SyncError.server(error)
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

/// Why a sync could not be done, in words a rider understands.
public struct SyncError: Error, CustomStringConvertible {
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

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    static func unreachable(_ address: ServerAddress, _ error: any Error) -> SyncError {
        SyncError(.unreachable, "cannot reach the shared store \(address): \(reason(error))")
    }

    static func server(_ error: any Error) -> SyncError {
        if let error = error as? PSQLError, error.serverInfo == nil {
            return SyncError(.unreachable, "the connection to the shared store was lost: \(reason(error))")
        }
        return SyncError(.server, "the shared store refused: \(reason(error))")
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
