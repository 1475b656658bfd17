import PostgresNIO
import Synchronization

/// Keeps the password from a server that asks for it in clear text over a connection whose certificate was not
/// checked (`sslmode` require, prefer, allow or disable). TLS without a checked certificate stops an eavesdropper,
/// not a man in the middle: one who answers the TLS handshake with a certificate of its own and asks for the
/// password in clear text (PostgreSQL's AuthenticationCleartextPassword) gets it, from libpq and PostgresNIO alike.
/// SCRAM and MD5 never send the password itself. The guard reads the server's first answer to the login and
/// closes the connection before PostgresNIO can answer a request for the clear password.
///
/// It watches the bytes as they arrive, before PostgresNIO's handler, and forwards them untouched. On a TLS
/// connection those bytes are encrypted: once the server accepted TLS (its `S`), PostgresNIO puts its TLS handler in
/// place while handling that byte, and the guard moves to just after it, where the bytes are plain.
final class LoginGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Whether the guard closed a connection (shared with whoever opened it, to say why the login failed).
    final class Verdict: Sendable {
        private let refusedFlag = Mutex(false)
        var refused: Bool { refusedFlag.withLock { $0 } }
        func refuse() { refusedFlag.withLock { $0 = true } }
    }

    enum Stage {
        /// The answer to PostgreSQL's SSLRequest: one byte, `S` or `N`.
        case tlsAnswer
        /// The server's first message after the startup message: the authentication it asks for, or an error.
        case firstMessage
    }

    private var stage: Stage
    private let verdict: Verdict
    /// The first message's bytes so far: its type, length and the authentication code (9 bytes are enough).
    private var head: [UInt8] = []

    /// `requestsTLS`: PostgresNIO sends an SSLRequest first (every mode but disable).
    init(requestsTLS: Bool, verdict: Verdict) {
        stage = requestsTLS ? .tlsAnswer : .firstMessage
        self.verdict = verdict
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if stage == .tlsAnswer {
            guard buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) == UInt8(ascii: "S") else {
                // No TLS (prefer and allow go on without it): what follows the answer is the first message.
                stage = .firstMessage
                buffer.moveReaderIndex(forwardBy: min(1, buffer.readableBytes))
                return decide(buffer, data, context: context)
            }
            context.fireChannelRead(data)
            if let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) {
                let plain = LoginGuard(requestsTLS: false, verdict: verdict)
                try? context.pipeline.syncOperations.addHandler(plain, position: .after(tls))
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        decide(buffer, data, context: context)
    }

    /// Reads the first message's head from `buffer`, then passes `data` on, or closes the connection instead: the
    /// request for the password is looked at before PostgresNIO, which answers it as it reads it, sees it.
    private func decide(_ buffer: ByteBuffer, _ data: NIOAny, context: ChannelHandlerContext) {
        head += buffer.readableBytesView.prefix(9 - head.count)
        let isAuthentication = head.first == UInt8(ascii: "R")
        guard head.count >= 9 || (!head.isEmpty && !isAuthentication) else {
            context.fireChannelRead(data)
            return
        }
        // 'R', a length of 8, then the code: 3 asks for the password in clear text (PostgreSQL protocol, §55.7).
        if isAuthentication && head[5...8].elementsEqual([0, 0, 0, 3]) {
            verdict.refuse()
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

@available(*, unavailable)
extension LoginGuard: Sendable {}
