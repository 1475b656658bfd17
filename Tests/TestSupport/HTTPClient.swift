import Foundation

/// A plain HTTP/1.1 client over a TCP socket, for tests that must send what a browser never would (a wrong
/// `Host`, a foreign `Origin`, no marker header) and read a Server-Sent Events stream message by message.
public final class HTTPConnection: @unchecked Sendable {
    private let socket: Int32
    private var pending = [UInt8]()
    /// Whether the body comes in chunks (a stream of unknown length).
    private var isChunked = false

    /// What came back: the status, the header fields (names in lower case) and the body read so far.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: String
        /// The body as it came (a file's bytes).
        public var bytes: [UInt8] = []

        /// The body as a JSON object (empty when it is not one).
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// Connects to `127.0.0.1:port`; with `source`, from that address (any of 127.0.0.0/8 is this machine, so a
    /// test can be several neighbours at once).
    public init(port: Int, from source: String? = nil) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(socket)
                throw NSError(domain: "HTTPConnection", code: Int(errno))
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(socket)
            throw NSError(
                domain: "HTTPConnection", code: Int(errno),
                userInfo: [
                    NSLocalizedDescriptionKey: "cannot connect to port \(port): \(String(cString: strerror(errno)))"
                ])
        }
    }

    deinit { close(socket) }

    /// One request and its answer, the connection closed after it. `host` nil sends none.
    public static func request(
        port: Int, _ method: String, _ path: String, host: String? = nil, headers: [String: String] = [:],
        body: String? = nil
    ) throws -> Answer {
        let connection = try HTTPConnection(port: port)
        try connection.send(method, path, host: host ?? "127.0.0.1:\(port)", headers: headers, body: body)
        var answer = try connection.readHead(seconds: 10)
        answer.bytes = connection.readBytesToEnd(seconds: 10)
        answer.body = String(decoding: answer.bytes, as: UTF8.self)
        return answer
    }

    /// Sends `bytes` as they are (a request cut short, a header a byte at a time); false once the server closed.
    @discardableResult
    public func sendRaw(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Sends a request with `Connection: close`.
    public func send(
        _ method: String, _ path: String, host: String, headers: [String: String] = [:], body: String? = nil
    )
        throws
    {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw NSError(domain: "HTTPConnection", code: Int(errno)) }
            sent += count
        }
    }

    /// The status line and header fields; the body stays to be read.
    public func readHead(seconds: Double) throws -> Answer {
        guard let head = readUntil(Array("\r\n\r\n".utf8), seconds: seconds) else {
            throw NSError(
                domain: "HTTPConnection", code: 2,
                userInfo: [NSLocalizedDescriptionKey: "no answer within \(seconds) s"])
        }
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers = [String: String]()
        for line in lines.dropFirst() where line.contains(":") {
            let parts = line.split(separator: ":", maxSplits: 1)
            headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        isChunked = headers["transfer-encoding"]?.lowercased() == "chunked"
        return Answer(status: status, headers: headers, body: "")
    }

    /// The next Server-Sent Events message (lines up to an empty one), or nil when none came within `seconds` or
    /// the stream ended. Chunked framing is taken out first.
    public func nextEvent(seconds: Double) -> (id: String?, event: String?, data: String, comment: Bool)? {
        guard let block = readUntil(Array("\n\n".utf8), seconds: seconds, dechunk: isChunked) else { return nil }
        var id: String?, event: String?, data = [String](), comment = false
        for line in String(decoding: block, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix(":") { comment = true }
            if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
            if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") { data.append(String(line.dropFirst(6))) }
        }
        return (id, event, data.joined(separator: "\n"), comment)
    }

    /// Whether the server closed the connection within `seconds` (bytes before the end are dropped).
    public func closes(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            switch fill(until: deadline) {
            case .closed: return true
            case .data: pending.removeAll()
            case .timeout: return false
            }
        }
        return false
    }

    public func readToEnd(seconds: Double) -> String {
        String(decoding: readBytesToEnd(seconds: seconds), as: UTF8.self)
    }

    public func readBytesToEnd(seconds: Double) -> [UInt8] {
        let deadline = Date().addingTimeInterval(seconds)
        while case .data = fill(until: deadline) {}
        defer { pending.removeAll() }
        return pending
    }

    private enum Fill { case data, closed, timeout }

    private func fill(until deadline: Date) -> Fill {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
        guard poll(&descriptor, 1, milliseconds) > 0 else { return .timeout }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(socket, &buffer, buffer.count, 0)
        guard count > 0 else { return .closed }
        pending.append(contentsOf: buffer[..<count])
        return .data
    }

    /// Chunked framing of the bytes read so far taken out: `size\r\n…\r\n` around each chunk.
    private var chunkedBytes = [UInt8]()
    private func dechunk() {
        while let lineEnd = firstIndex(of: Array("\r\n".utf8), in: pending) {
            guard let size = Int(String(decoding: pending[..<lineEnd], as: UTF8.self), radix: 16) else { return }
            let start = lineEnd + 2
            guard pending.count >= start + size + 2 else { return }
            chunkedBytes.append(contentsOf: pending[start..<(start + size)])
            pending.removeFirst(start + size + 2)
        }
    }

    private func readUntil(_ separator: [UInt8], seconds: Double, dechunk chunked: Bool = false) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if chunked { dechunk() }
            let source = chunked ? chunkedBytes : pending
            if let end = firstIndex(of: separator, in: source) {
                let block = Array(source[..<end])
                if chunked {
                    chunkedBytes.removeFirst(end + separator.count)
                } else {
                    pending.removeFirst(end + separator.count)
                }
                return block
            }
            guard case .data = fill(until: deadline) else { return nil }
        }
    }

    private func firstIndex(of separator: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= separator.count else { return nil }
        for index in 0...(bytes.count - separator.count)
        where bytes[index..<(index + separator.count)].elementsEqual(separator) {
            return index
        }
        return nil
    }
}
