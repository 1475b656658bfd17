import Foundation
import RideTestSupport
import TestSupport
import Testing
import WorkoutStore

@testable import RideSync

/// `cyclelog-sync` and `cyclelog rider` as a rider runs them.
@Suite("cyclelog-sync's command line")
struct SyncCommandTests {
    func sync(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        status: Int32, output: String
    ) {
        try await runProgram(try builtBinary("cyclelog-sync").path, arguments, environment: environment)
    }

    @Test("a password in --postgres is refused before anything is sent, and the address is read as libpq reads it")
    func passwordRefused() async throws {
        let collector = try Collector()
        let result = try await sync([
            "push", "--db", collector.path, "--postgres", "postgres://anna:secret@db.example/rides",
        ])
        #expect(result.status == 2)
        #expect(result.output.contains("must not carry a password"))
        #expect(!result.output.contains("secret"))
        let address = try ServerAddress.resolve(
            url: "postgresql://anna@%2Fvar%2Frun%2Fpostgresql:5433/rides", environment: ["HOME": "/nonexistent"])
        #expect(address.endpoint == .unixSocket(path: "/var/run/postgresql/.s.PGSQL.5433"))
        #expect(address.user == "anna" && address.database == "rides")
        let tcp = try ServerAddress.resolve(
            url: nil, environment: ["PGHOST": "db.example", "PGUSER": "anna", "HOME": "/nonexistent"])
        #expect(
            tcp.endpoint == .tcp(host: "db.example", port: 5432) && tcp.tlsMode == .require && tcp.database == "anna")
    }

    @Test("the password comes from the credential (unless empty), a password file or ~/.pgpass, in that order")
    func passwordSources() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-pass-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "db.example:5432:rides:anna:from\\:pgpass\n".write(
            toFile: folder + "/pgpass", atomically: true, encoding: .utf8)
        let url = "postgres://anna@db.example/rides"
        var environment = ["PGPASSFILE": folder + "/pgpass", "HOME": "/nonexistent"]
        #expect(try ServerAddress.resolve(url: url, environment: environment).password == "from:pgpass")
        try "from file\nsecond line\n".write(toFile: folder + "/file", atomically: true, encoding: .utf8)
        #expect(
            try ServerAddress.resolve(url: url, passwordFile: folder + "/file", environment: environment).password
                == "from file")
        try FileManager.default.createDirectory(atPath: folder + "/credentials", withIntermediateDirectories: true)
        try "from systemd".write(toFile: folder + "/credentials/postgres-password", atomically: true, encoding: .utf8)
        environment["CREDENTIALS_DIRECTORY"] = folder + "/credentials"
        #expect(
            try ServerAddress.resolve(url: url, passwordFile: folder + "/file", environment: environment).password
                == "from systemd")
        // An empty line (the unit's default credential when /etc/cyclelog/postgres-password is missing) gives none.
        try "\n".write(toFile: folder + "/credentials/postgres-password", atomically: true, encoding: .utf8)
        #expect(try ServerAddress.resolve(url: url, environment: environment).password == "from:pgpass")
        // Another user's line does not match.
        #expect(
            try ServerAddress.resolve(
                url: "postgres://bob@db.example/rides", environment: ["PGPASSFILE": folder + "/pgpass"]
            ).password == nil)
    }

    @Test("no server: exit 75 in words, recorded for status; back-off 1, 2, 4 … 300 s")
    func unreachable() async throws {
        let collector = try Collector()
        try collector.replay(Fixtures.journals[0])
        let nowhere = [
            "PGHOST": FileManager.default.temporaryDirectory.appendingPathComponent("no-server-\(UUID())").path
        ]
        let result = try await sync(["sync", "--db", collector.path], environment: nowhere)
        #expect(result.status == 75)
        #expect(result.output.contains("cannot reach the shared store"))
        let status = try await sync(["status", "--db", collector.path])
        #expect(status.status == 0)
        #expect(status.output.contains("Waiting to be pushed: 1 ride, 0 deletions."))
        #expect(status.output.contains("Last successful sync: never."))
        #expect(status.output.contains("(1 in a row): cannot reach the shared store"))
        let json = try await sync(["status", "--json", "--db", collector.path])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect((object?["pendingRides"] as? [Any])?.count == 1 && object?["failuresInARow"] as? Int == 1)
        #expect((1...11).map { Backoff.seconds(afterFailures: $0) } == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
        // A dry run lists what would go, and sends nothing (no server is asked).
        let dry = try await sync(["push", "--dry-run", "--db", collector.path], environment: nowhere)
        #expect(dry.status == 0 && dry.output.contains("v1: would be pushed"))
    }

    @Test("cyclelog rider shows and renames the rider; a deleted ride waits as a deletion")
    func riderAndDeletion() async throws {
        let collector = try Collector()
        let id = try collector.replay(Fixtures.journals[0])
        let cyclelog = try builtBinary("cyclelog").path
        let renamed = try await runProgram(cyclelog, ["rider", "Anna Z", "--db", collector.path])
        #expect(renamed.status == 0 && renamed.output.contains("Rider: Anna Z ("))
        #expect(try collector.store.rider().name == "Anna Z")
        #expect(try await runProgram(cyclelog, ["rider", "", "--db", collector.path]).status != 0)
        #expect(try await runProgram(cyclelog, ["delete", "\(id)", "--db", collector.path]).status == 0)
        let status = try await sync(["status", "--db", collector.path])
        #expect(status.output.contains("Waiting to be pushed: 0 rides, 1 deletion."))
        #expect(try collector.store.tombstones().map(\.version) == [2])
    }
}
