import NIOCore
import Synchronization

/// How many connections each address holds open, for the cap that keeps one neighbour from taking every socket:
/// the paired screens of a household are a few devices with a few connections each, while a stranger's flood of
/// bare TCP connections would otherwise use up the descriptors every screen needs (a connection is accepted
/// before anything is known of it).
public final class ConnectionCounts: Sendable {
    /// At most this many connections open at once from one address: a browser opens up to six to one site, a page
    /// holds one more for its stream, and a few screens may share an address behind a router.
    public let perAddress: Int
    private let open = Mutex<[String: Int]>([:])

    public init(perAddress: Int = 32) {
        self.perAddress = perAddress
    }

    /// Counts a new connection from `address`; false (and nothing counted) when it already holds `perAddress`.
    public func admit(_ address: String) -> Bool {
        open.withLock { counts in
            let count = counts[address, default: 0]
            guard count < perAddress else { return false }
            counts[address] = count + 1
            return true
        }
    }

    /// Forgets a connection `admit` counted; an address with none left is dropped, so the table holds only the
    /// addresses connected now.
    public func release(_ address: String) {
        open.withLock { counts in
            guard let count = counts[address] else { return }
            counts[address] = count > 1 ? count - 1 : nil
        }
    }

    /// The connections open from `address` now.
    public func count(_ address: String) -> Int {
        open.withLock { $0[address, default: 0] }
    }

    /// How many addresses hold a connection now.
    public var addresses: Int {
        open.withLock { $0.count }
    }
}

/// The first handler of every connection's HTTP pipeline: it closes a connection at once when its address
/// already holds `ConnectionCounts.perAddress`, before the connection costs a request's work, and gives its place
/// back when it closes. It only looks at the channel's life, never at the bytes, which it passes on untouched.
final class ConnectionLimiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let counts: ConnectionCounts
    /// The address this connection was counted under; nil until it was, and after it gave its place back.
    private var counted: String?

    init(counts: ConnectionCounts) {
        self.counts = counts
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The HTTP pipeline may be set up on a channel that is active already.
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if admit(context) { context.fireChannelActive() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        giveBack()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        giveBack()
    }

    /// Counts the connection (once: true when it was already), or closes it when its address is over the cap.
    @discardableResult
    private func admit(_ context: ChannelHandlerContext) -> Bool {
        guard counted == nil else { return true }
        let address = context.channel.remoteAddress?.ipAddress ?? ""
        guard counts.admit(address) else {
            context.close(promise: nil)
            return false
        }
        counted = address
        return true
    }

    private func giveBack() {
        if let address = counted { counts.release(address) }
        counted = nil
    }
}

@available(*, unavailable)
extension ConnectionLimiter: Sendable {}

extension ConnectionCounts {
    /// The handler the HTTP server puts first in each connection's pipeline, counting it here.
    public func handler() -> any RemovableChannelHandler { ConnectionLimiter(counts: self) }
}
