import Foundation

/// The end of an OAuth 2 authorization on this machine: a listener on 127.0.0.1 that takes the one request the
/// browser is sent back with (`?code=…&state=…`), checks its `state` (a request that does not carry it, from
/// another program or page, is answered 400 and not taken), answers the browser in words and closes.
public final class LoopbackRedirect: @unchecked Sendable {
    public let port: Int
    private let descriptor: Int32

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Listens on 127.0.0.1:`port` (0: a free port).
    public init(port: Int = 0) throws(Failure) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "no socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 4) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot listen on 127.0.0.1:\(port): \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// Where the service sends the browser back to.
    public var redirectURI: String { "http://127.0.0.1:\(port)/authorized" }

    /// Waits for the browser's return with `state`; its `code`. Blocks its thread up to `timeoutSeconds`.
    public func code(state: String, timeoutSeconds: Double) throws(Failure) -> String {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw Failure(description: "no answer came back from the browser within \(Int(timeoutSeconds)) s")
            }
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, Int32(min(left, 1) * 1000)) > 0 else { continue }
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { continue }
            defer { close(connection) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard let target = Self.requestTarget(connection) else { continue }
            let query = target.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
            let fields = Dictionary(FormEncoding.decode(query), uniquingKeysWith: { first, _ in first })
            guard fields["state"] == state else {
                Self.answer(connection, status: "400 Bad Request", "This is not the authorization cyclelog asked for.")
                continue
            }
            if let error = fields["error"] {
                Self.answer(
                    connection, status: "200 OK", "cyclelog was not authorized (\(error)). You may close this page.")
                throw Failure(description: "the authorization was refused in the browser (\(error))")
            }
            guard let code = fields["code"], !code.isEmpty else {
                Self.answer(connection, status: "400 Bad Request", "The answer carries no authorization code.")
                continue
            }
            Self.answer(connection, status: "200 OK", "cyclelog is authorized. You may close this page.")
            return code
        }
    }

    /// The request line's target of a GET, read up to the end of its head (at most 16 kB).
    private static func requestTarget(_ connection: Int32) -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < 16_384 {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return nil }
            received += buffer[0..<count]
            // Bytes, not characters: "\r\n" is one Character in Swift.
            let end: [UInt8] = [13, 10, 13, 10]
            if received.count >= 4, (0...(received.count - 4)).contains(where: { Array(received[$0..<$0 + 4]) == end })
            {
                break
            }
        }
        let line = String(decoding: received.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "GET" else { return nil }
        return String(parts[1])
    }

    private static func answer(_ connection: Int32, status: String, _ words: String) {
        let body = "<!doctype html><meta charset=utf-8><title>cyclelog</title><p>\(words)</p>\n"
        let response =
            "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n\(body)"
        _ = response.withCString { write(connection, $0, strlen($0)) }
    }
}
