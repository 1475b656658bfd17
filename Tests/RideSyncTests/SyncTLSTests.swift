import Foundation
import PostgresNIO
import RideTestSupport
import TestSupport
import Testing

@testable import RideSync

/// Over TCP the connection is encrypted unless the rider says otherwise, and the server's certificate is checked
/// when asked: against a real PostgreSQL with `ssl = on` that lets in TLS logins only.
@Suite("cyclelog-sync over TLS")
struct SyncTLSTests {
    @Test("require encrypts; verify-full checks the certificate against PGSSLROOTCERT; disable is refused there")
    func tls() async throws {
        let server = try await PostgresServer.started(withTLS: true)
        let port = try #require(server.tlsPort)
        let database = try await server.newDatabase().database
        let binary = try builtBinary("cyclelog-sync").path
        let collector = try Collector()
        try collector.replay(Fixtures.journals[0])
        func sync(_ arguments: [String], mode: String, root: String? = nil) async throws -> (
            status: Int32, output: String
        ) {
            var environment = [
                "PGHOST": "localhost", "PGPORT": "\(port)", "PGUSER": PostgresServer.superuser,
                "PGDATABASE": database, "PGSSLMODE": mode, "PGPASSFILE": "/dev/null",
            ]
            if let root { environment["PGSSLROOTCERT"] = root }
            return try await runProgram(binary, arguments + ["--db", collector.path], environment: environment)
        }
        // The default over TCP is require: encrypted, whatever the certificate.
        let address = try ServerAddress.resolve(url: "postgres://cyclelog@localhost:\(port)/\(database)")
        #expect(address.tlsMode == .require)
        let initialized = try await sync(["init"], mode: "require")
        #expect(initialized.status == 0, "\(initialized.output)")
        let encrypted = try await SharedStore.with(address) { store throws(SyncError) in
            try await store.rows("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", as: Bool.self)
        }
        #expect(encrypted == [true])
        // verify-full with the authority that signed the server's certificate: pushed.
        let verified = try await sync(["push"], mode: "verify-full", root: server.folder + "/tls/ca.crt")
        #expect(
            verified.status == 0 && verified.output.contains("pushed (new to the shared store)"), "\(verified.output)")
        // With another authority: the certificate is not trusted and nothing is sent.
        let untrusted = try await sync(["pull"], mode: "verify-full", root: server.folder + "/tls/other-ca.crt")
        #expect(untrusted.status == 75, "\(untrusted.output)")
        #expect(untrusted.output.lowercased().contains("certificate"), "\(untrusted.output)")
        // Without TLS this server lets nobody in over TCP.
        let plain = try await sync(["pull"], mode: "disable")
        #expect(plain.status != 0 && plain.output.contains("pg_hba.conf"), "\(plain.output)")
        try await server.stopImmediately()
    }

    /// A man in the middle answers TLS with a certificate of its own and asks for the password in clear text: with
    /// the certificate unchecked (require, the default) the password is not sent and the rider is told how to check
    /// it; checked (verify-full), the server is who it says and the password goes. SCRAM never sends the password,
    /// so it is used as before. A real PostgreSQL plays the server that asks (`password` in pg_hba.conf).
    @Test("a password is sent in clear text only to a server whose certificate was checked")
    func cleartextPassword() async throws {
        let server = try await PostgresServer.started(withTLS: true)
        let port = try #require(server.tlsPort)
        let secret = "s3cret-\(UUID().uuidString.prefix(8))"
        try await server.passwordRoles(secret)
        let database = try await server.newDatabase().database
        func address(_ role: String, _ mode: ServerAddress.TLSMode, root: String? = nil) -> ServerAddress {
            ServerAddress(
                endpoint: .tcp(host: "localhost", port: port), user: role, database: database, password: secret,
                tlsMode: mode, rootCertificatePath: root)
        }
        func whoAmI(_ address: ServerAddress) async throws(SyncError) -> [String] {
            try await SharedStore.with(address) { store throws(SyncError) in
                try await store.rows("SELECT current_user::text", as: String.self)
            }
        }
        for mode in [ServerAddress.TLSMode.require, .prefer] {
            let refused = await #expect(throws: SyncError.self) {
                _ = try await whoAmI(address(PostgresServer.cleartextRole, mode))
            }
            #expect(refused?.kind == .refused, "\(String(describing: refused))")
            #expect(refused?.description.contains("in clear text") == true)
            #expect(refused?.description.contains("sslmode=verify-full") == true)
            #expect(refused?.description.contains(secret) == false)
        }
        // Nothing reached the server but the request: it logged no failed password.
        let log = try String(contentsOfFile: server.folder + "/server.log", encoding: .utf8)
        #expect(!log.contains("password authentication failed"), "\(log.suffix(2000))")
        let root = server.folder + "/tls/ca.crt"
        #expect(
            try await whoAmI(address(PostgresServer.cleartextRole, .verifyFull, root: root)) == [
                PostgresServer.cleartextRole
            ])
        #expect(try await whoAmI(address(PostgresServer.scramRole, .require)) == [PostgresServer.scramRole])
        // A wrong password is still the server's to refuse, in its own words.
        var wrong = address(PostgresServer.scramRole, .require)
        wrong.password = "wrong"
        let denied = await #expect(throws: SyncError.self) { _ = try await whoAmI(wrong) }
        #expect(denied?.description.contains("password authentication failed") == true, "\(String(describing: denied))")
        try await server.stopImmediately()
    }
}
