import Foundation
import TestSupport
import Testing

@testable import RideSync

/// Over TCP the connection is encrypted unless the rider says otherwise, and the server's certificate is checked
/// when asked: against a real PostgreSQL with `ssl = on` that lets in TLS logins only.
@Suite("cyclelog-sync over TLS")
struct SyncTLSTests {
    @Test("require encrypts; verify-full checks the certificate against PGSSLROOTCERT; disable is refused there")
    func tls() async throws {
        let server = try PostgresServer(withTLS: true)
        let port = try #require(server.tlsPort)
        let database = try await server.newDatabase().database
        let binary = try builtBinary("cyclelog-sync").path
        let collector = try Collector()
        try collector.replay(Fixtures.journals[0])
        func sync(_ arguments: [String], mode: String, root: String? = nil) throws -> (status: Int32, output: String) {
            var environment = [
                "PGHOST": "localhost", "PGPORT": "\(port)", "PGUSER": PostgresServer.superuser,
                "PGDATABASE": database, "PGSSLMODE": mode, "PGPASSFILE": "/dev/null",
            ]
            if let root { environment["PGSSLROOTCERT"] = root }
            return try runProgram(binary, arguments + ["--db", collector.path], environment: environment)
        }
        // The default over TCP is require: encrypted, whatever the certificate.
        let address = try ServerAddress.resolve(url: "postgres://cyclelog@localhost:\(port)/\(database)")
        #expect(address.tlsMode == .require)
        let initialized = try sync(["init"], mode: "require")
        #expect(initialized.status == 0, "\(initialized.output)")
        let encrypted = try await SharedStore.with(address) { store throws(SyncError) in
            try await store.rows("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", as: Bool.self)
        }
        #expect(encrypted == [true])
        // verify-full with the authority that signed the server's certificate: pushed.
        let verified = try sync(["push"], mode: "verify-full", root: server.folder + "/tls/ca.crt")
        #expect(
            verified.status == 0 && verified.output.contains("pushed (new to the shared store)"), "\(verified.output)")
        // With another authority: the certificate is not trusted and nothing is sent.
        let untrusted = try sync(["pull"], mode: "verify-full", root: server.folder + "/tls/other-ca.crt")
        #expect(untrusted.status == 75, "\(untrusted.output)")
        #expect(untrusted.output.lowercased().contains("certificate"), "\(untrusted.output)")
        // Without TLS this server lets nobody in over TCP.
        let plain = try sync(["pull"], mode: "disable")
        #expect(plain.status != 0 && plain.output.contains("pg_hba.conf"), "\(plain.output)")
        try server.stopImmediately()
    }
}
