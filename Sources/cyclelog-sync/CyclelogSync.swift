import ArgumentParser
import Formats
import Foundation
import ProgramMain
import RideSync
import RideUploads
import WorkoutStore
import Workouts

@main
struct CyclelogSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cyclelog-sync",
        abstract: "Keeps this database's rides consistent with a shared PostgreSQL, by sync identifier and version.",
        discussion: """
            Pushes the rides recorded here and pulls this rider's rides recorded elsewhere. The server is named by \
            --postgres or libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE, PGSSLMODE, PGPASSFILE); the \
            password never goes on the command line.
            """,
        version: ProgramVersion.text,
        subcommands: [
            SyncNow.self, Init.self, Push.self, Pull.self, Status.self, Conflicts.self, Resolve.self, Duplicates.self,
            Join.self, Account.self, Upload.self, Plans.self,
        ], defaultSubcommand: SyncNow.self)

    /// Every message starts "cyclelog-sync: " (ArgumentParser's would start "Error: ").
    static func main() { runSaying("cyclelog-sync") }
}

/// Where the rides are and where the shared store is.
struct Places: ParsableArguments {
    @Option(help: "The workout database (default: $CYCLELOG_DB, else $XDG_DATA_HOME/cyclelog/cyclelog.sqlite).")
    var db: String?

    @Option(help: "The shared store: postgres://USER@HOST:PORT/DATABASE?sslmode=… (no password in it).")
    var postgres: String?

    @Option(help: "A file whose first line is the password (else the credential postgres-password, PGPASSFILE).")
    var passwordFile: String?

    @Option(
        help: ArgumentHelp(
            "How long the server may take to answer one request before the connection counts as lost (exit 75).",
            valueName: "seconds"))
    var replyTimeout: Double = SharedStore.defaultReplySeconds

    @Option(
        help: "The folder of the intervals.icu and Strava accounts' files (default: accounts/ beside the database).")
    var accounts: String?

    var folder: AccountFolder {
        AccountFolder(path: accounts ?? AccountFolder.beside(database: db ?? WorkoutStore.defaultPath()))
    }

    func validate() throws {
        guard replyTimeout > 0, replyTimeout.isFinite else {
            throw ValidationError("--reply-timeout takes a number of seconds above 0")
        }
    }

    func openLocal() throws -> WorkoutStore {
        do {
            return try WorkoutStore(path: db ?? WorkoutStore.defaultPath(), access: .write)
        } catch {
            throw SyncError(.local, error.description)
        }
    }

    func address() throws -> ServerAddress {
        do {
            return try ServerAddress.resolve(url: postgres, passwordFile: passwordFile)
        } catch {
            throw SyncError(.local, error.description)
        }
    }

    /// Opens both ends, runs `body`, closes the connection; records how it went for `status` (and the back-off).
    func withSynchronizer<T>(_ body: (Synchronizer) async throws(SyncError) -> T) async throws -> T {
        let local = try openLocal()
        let address = try address()
        do {
            let result = try await SharedStore.with(address, replySeconds: replyTimeout) { server throws(SyncError) in
                try await body(Synchronizer(local: local, server: server))
            }
            try? local.recordSync(failure: nil)
            return result
        } catch {
            try? local.recordSync(failure: error.description)
            throw error
        }
    }
}

/// Text that came from elsewhere (a rider's or a collector's name, a server's message), as every cyclelog command
/// shows it: control characters escaped.
func shown(_ text: String) -> String { ShownText.visible(text) }
