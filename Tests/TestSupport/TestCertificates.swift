import Foundation

/// A throw-away certificate authority and what it signed, made by openssl for the tests of TLS: in `folder`,
/// `ca.crt` (the authority), `server.crt` and `server.key` (for localhost and 127.0.0.1, signed by it), and
/// `other-ca.crt` (an authority that signed nothing here).
public enum TestCertificates {
    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    public static func make(in folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["ca", "other-ca"] {
            try openssl(
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=cyclelog test \(name)",
                    "-keyout", "\(folder)/\(name).key", "-out", "\(folder)/\(name).crt",
                ], folder)
        }
        try openssl(
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(folder)/server.key",
                "-out", "\(folder)/server.csr",
            ], folder)
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(
            toFile: folder + "/san.ext", atomically: false, encoding: .utf8)
        try openssl(
            [
                "x509", "-req", "-in", "\(folder)/server.csr", "-CA", "\(folder)/ca.crt", "-CAkey", "\(folder)/ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", "\(folder)/san.ext", "-out", "\(folder)/server.crt",
            ], folder)
    }

    private static func openssl(_ arguments: [String], _ folder: String) throws {
        let log = folder + "/openssl.log"
        let child = try ChildProcess(["/usr/bin/openssl"] + arguments, outputPath: log)
        guard child.wait(seconds: 60) == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw Failed(description: "openssl \(arguments.joined(separator: " ")) failed: \(output)")
        }
    }
}
