import Synchronization

/// Values published to any number of subscribers, each with a stream of its own: BlueZ's events to the recorder
/// and the calibration, the recorder's status to the dashboard, the D-Bus object and a mirror; a subscriber that
/// stops iterating leaves the others alone (it is forgotten at once, with no task to schedule). With
/// `keepingLatest`, a slow subscriber sees the newest value, not a backlog, and a new one starts from the
/// current value.
public final class Broadcast<Element: Sendable>: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var nextSubscriber = 0
        var latest: Element?
        var finished = false
    }

    private let state = Mutex(State())
    private let keepingLatest: Bool

    /// `keepingLatest`: for a state (the status); otherwise every value is delivered (notices, saved rides).
    public init(keepingLatest: Bool) {
        self.keepingLatest = keepingLatest
    }

    /// The values from now on (with `keepingLatest`, the current one first), until the publisher finishes.
    public func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(
            bufferingPolicy: keepingLatest ? .bufferingNewest(1) : .unbounded)
        let id: Int? = state.withLock { state in
            if keepingLatest, let latest = state.latest { continuation.yield(latest) }
            guard !state.finished else { return nil }
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The newest value published (with `keepingLatest`), nil before the first.
    public var latest: Element? { state.withLock { $0.latest } }

    public func publish(_ value: Element) {
        let subscribers = state.withLock { state in
            if keepingLatest { state.latest = value }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(value) }
    }

    /// Ends every stream; later subscribers get (with `keepingLatest`) the last value and the end.
    public func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
