import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Where a service is: `https://HOST[:PORT]` and a path prefix. Plain `http` is taken for this machine only (a
/// stand-in of the service, a local proxy): a key or a token never crosses a network in clear.
public struct ServiceAddress: Equatable, Sendable, CustomStringConvertible {
    public var secure: Bool
    public var host: String
    public var port: Int
    /// The path every request's path is added to ("" or "/prefix").
    public var basePath: String

    public var description: String {
        let scheme = secure ? "https" : "http"
        let standardPort = secure ? 443 : 80
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)\(port == standardPort ? "" : ":\(port)")\(basePath)"
    }

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ text: String) throws(Refused) {
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(),
            let host = parts.host, !host.isEmpty, parts.user == nil, parts.password == nil, parts.query == nil
        else {
            throw Refused(description: "\(text) is not an address such as https://intervals.icu")
        }
        switch scheme {
        case "https": secure = true
        case "http":
            guard Self.isLoopback(host) else {
                throw Refused(
                    description: "\(text) is plain http to another machine: the key or token would cross the network "
                        + "in clear; use https")
            }
            secure = false
        default: throw Refused(description: "\(text) is not an http or https address")
        }
        let bracketless = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.host = bracketless
        port = parts.port ?? (secure ? 443 : 80)
        basePath = parts.path.hasSuffix("/") ? String(parts.path.dropLast()) : parts.path
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}

/// One HTTP request to a service (intervals.icu, Strava) as its client makes it; named apart from swift-http-types'
/// `HTTPRequest`, which the mirror uses.
public struct ServiceRequest: Sendable {
    public var method: HTTPMethod
    /// The path and query, after the address's base path (`/api/v1/athlete/0/activities?oldest=…`).
    public var target: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(_ method: HTTPMethod, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// Whether sending it twice does what sending it once does (it may be sent again after a lost answer).
    public var isIdempotent: Bool { method != .POST }
}

/// A service's answer: its status, headers and body.
public struct ServiceResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Why a request has no answer. `mayHaveArrived` says whether the service may have acted on it all the same (the
/// connection was made and the request sent, then nothing came back): an upload is then looked up before it is
/// sent again.
public struct TransportFailure: Error, Sendable, CustomStringConvertible {
    public var description: String
    public var mayHaveArrived: Bool
}

/// What sends a request and brings its answer: the network (`NetworkTransport`), or a test's double.
public protocol HTTPTransport: Sendable {
    func send(_ request: ServiceRequest, to address: ServiceAddress, deadlineSeconds: Double)
        async throws(TransportFailure) -> ServiceResponse
}

/// HTTP/1.1 over SwiftNIO, one connection per request (`Connection: close`), TLS with the system's trusted
/// certificates and the host's name checked. A whole request and its answer must fit in the deadline; an answer
/// larger than `maximumAnswerBytes` is refused.
///
/// Not AsyncHTTPClient, measured (its 1.37.0, a connect timeout of 10 s, on this project's machine): its connection
/// pool tries a refused connection and a certificate it does not trust again until the connect timeout, so "nothing
/// listens there" and "a captive portal's certificate" came after 10.0 s each, where this client says them at once
/// (and the uploader's three attempts would wait 30 s); and its TLS failure is the same `NIOSSLError`. What a request
/// needs of a client here is one exchange with a deadline, whether its first byte left (`mayHaveArrived`, which an
/// upload that may have arrived is looked up by before it is sent again), and a bound on the answer: no redirects
/// (`RetryPolicy` says them), no pool (a run sends a few requests a day).
public struct NetworkTransport: HTTPTransport {
    public static let maximumAnswerBytes = 8 << 20

    /// A file of certificate authorities trusted besides the system's: a proxy that inspects TLS, a stand-in of a
    /// service in a test (`CYCLELOG_SERVICE_CA_FILE`).
    public let extraAuthorities: String?
    /// The TLS context, made at the first HTTPS request and used by every one after it: making one reads the
    /// system's certificate authorities, which a run of many uploads need not read again for each.
    private let tls = TLSContext()

    public init(extraAuthorities: String? = ProcessInfo.processInfo.environment["CYCLELOG_SERVICE_CA_FILE"]) {
        self.extraAuthorities = extraAuthorities.flatMap { $0.isEmpty ? nil : $0 }
    }

    public func send(_ request: ServiceRequest, to address: ServiceAddress, deadlineSeconds: Double)
        async throws(TransportFailure) -> ServiceResponse
    {
        let sent = SentMark()
        do {
            return try await withThrowingTaskGroup(of: ServiceResponse?.self) { group in
                group.addTask { try await exchange(request, address, sent) }
                group.addTask {
                    try await Task.sleep(for: .seconds(deadlineSeconds))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw TransportFailure(
                        description: "\(address.host) did not answer within \(Int(deadlineSeconds.rounded())) s",
                        mayHaveArrived: sent.value)
                }
                return response
            }
        } catch let failure as TransportFailure {
            throw failure
        } catch let error as NIOSSLExtraError where error == .failedToValidateHostname {
            throw TransportFailure(
                description: "\(address.host)'s certificate is for another name (a proxy or a captive portal in "
                    + "between?); nothing was sent", mayHaveArrived: false)
        } catch NIOSSLError.handshakeFailed {
            // BoringSSL's reason is not a public part of the error: its one cause a client with the system's
            // authorities meets in practice is a certificate it does not trust; the other (no TLS version or
            // cipher in common) is named too.
            throw TransportFailure(
                description: "\(address.host)'s certificate is not one this machine trusts, or it speaks no TLS this "
                    + "machine takes (a proxy or a captive portal in between?); nothing was sent", mayHaveArrived: false
            )
        } catch let error as NIOSSLError {
            throw TransportFailure(
                description: "the secure connection to \(address.host) failed (\(error))", mayHaveArrived: false)
        } catch {
            throw TransportFailure(
                description: "the connection to \(address.host) failed (\(Self.words(error)))",
                mayHaveArrived: sent.value)
        }
    }

    /// A socket error as its own words ("Connection refused"), not NIO's type dump.
    static func words(_ error: any Error) -> String {
        if let io = error as? IOError { return String(cString: strerror(io.errnoCode)) }
        if error is ChannelError { return "the connection was closed" }
        if error is CancellationError { return "cancelled" }
        return String(describing: error)
    }

    private func exchange(_ request: ServiceRequest, _ address: ServiceAddress, _ sent: SentMark) async throws
        -> ServiceResponse
    {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: address.host, port: address.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if address.secure {
                        let context = try tls.context(extraAuthorities: extraAuthorities)
                        let serverName =
                            address.host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" }
                            ? nil : address.host
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: context, serverHostname: serverName))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(
                version: .http1_1, method: request.method, uri: address.basePath + request.target)
            let standardPort = address.secure ? 443 : 80
            head.headers.add(
                name: "Host", value: address.port == standardPort ? address.host : "\(address.host):\(address.port)")
            head.headers.add(name: "User-Agent", value: "cyclelog-sync")
            head.headers.add(name: "Connection", value: "close")
            for (name, value) in request.headers { head.headers.add(name: name, value: value) }
            if !request.body.isEmpty || request.method == .POST || request.method == .PUT {
                head.headers.add(name: "Content-Length", value: String(request.body.count))
            }
            // From the first byte on, the service may act on the request whatever happens to its answer.
            sent.value = true
            try await outbound.write(.head(head))
            if !request.body.isEmpty {
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: request.body))))
            }
            try await outbound.write(.end(nil))
            var response: ServiceResponse?
            for try await part in inbound {
                switch part {
                case .head(let answer):
                    response = ServiceResponse(
                        status: Int(answer.status.code), headers: answer.headers.map { ($0.name, $0.value) })
                case .body(var buffer):
                    guard response != nil else { continue }
                    guard response!.body.count + buffer.readableBytes <= Self.maximumAnswerBytes else {
                        throw TransportFailure(
                            description:
                                "\(address.host) sent an answer larger than \(Self.maximumAnswerBytes >> 20) MB",
                            mayHaveArrived: true)
                    }
                    response!.body += buffer.readBytes(length: buffer.readableBytes) ?? []
                case .end:
                    if let response { return response }
                }
            }
            throw TransportFailure(
                description: "\(address.host) closed the connection before it answered", mayHaveArrived: true)
        }
    }
}

/// One transport's TLS context, made once.
private final class TLSContext: @unchecked Sendable {
    private let lock = NSLock()
    private var made: NIOSSLContext?

    func context(extraAuthorities: String?) throws -> NIOSSLContext {
        try lock.withLock {
            if let made { return made }
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let extraAuthorities { configuration.additionalTrustRoots = [.file(extraAuthorities)] }
            let context = try NIOSSLContext(configuration: configuration)
            made = context
            return context
        }
    }
}

/// Whether the request went out whole: set by the exchange, read by whoever reports its failure.
private final class SentMark: @unchecked Sendable {
    private let lock = NSLock()
    private var sent = false
    var value: Bool {
        get { lock.withLock { sent } }
        set { lock.withLock { sent = newValue } }
    }
}
