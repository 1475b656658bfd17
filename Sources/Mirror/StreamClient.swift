import Synchronization
import Workouts

/// One screen's Server-Sent Events stream: the messages waiting to be written to its socket. A screen that reads
/// slowly loses `live` values (they are only worth anything at once) and is owed a snapshot instead; what it
/// must not miss (control events, snapshots, status) always queues, and a screen so far behind that even those
/// pile up is closed (it reconnects and the events it missed are replayed). Nothing here waits for a screen:
/// the mirror, the other screens and the recorder never slow down for one.
public final class StreamClient: Sendable {
    /// `live` values beyond this many queued messages are dropped.
    static let liveLimit = 64
    /// Beyond this many queued messages the screen is closed.
    static let closeLimit = 4096

    public let id: Int
    /// The SHA-256 of the device token it was opened with (revoking the device closes it).
    public let device: String
    /// What the device is granted now (`MirrorHub.grant` changes it on an open stream).
    private let granted: Mutex<Set<DataType>>

    private struct State {
        var queue: [String] = []
        var waiter: CheckedContinuation<String?, Never>?
        var closed = false
        var owesSnapshot = false
    }
    private let state = Mutex(State())

    init(id: Int, device: String, types: Set<DataType>) {
        self.id = id
        self.device = device
        granted = Mutex(types)
    }

    /// The types its messages are written for; changed only by the hub, as the device's grant changes.
    public internal(set) var types: Set<DataType> {
        get { granted.withLock { $0 } }
        set { granted.withLock { $0 = newValue } }
    }

    /// Queues a message that must arrive.
    func push(_ message: String) { deliver(message, droppable: false) }

    /// Queues a `live` value unless the screen is behind; then it is owed a snapshot.
    func pushLive(_ message: String) { deliver(message, droppable: true) }

    /// Whether the screen lost `live` values since the last snapshot (and forgets it: the caller sends one).
    func takeOwedSnapshot() -> Bool {
        state.withLock { state in
            defer { state.owesSnapshot = false }
            return state.owesSnapshot
        }
    }

    private func deliver(_ message: String, droppable: Bool) {
        let waiter: CheckedContinuation<String?, Never>? = state.withLock { state in
            guard !state.closed else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if droppable && state.queue.count >= Self.liveLimit {
                state.owesSnapshot = true
            } else if state.queue.count >= Self.closeLimit {
                state.closed = true
                state.queue.removeAll()
            } else {
                state.queue.append(message)
            }
            return nil
        }
        waiter?.resume(returning: message)
    }

    /// The next message to write, waiting for one; nil once the stream is closed.
    public func next() async -> String? {
        await withCheckedContinuation { continuation in
            let ready: String?? = state.withLock { state in
                if !state.queue.isEmpty { return .some(state.queue.removeFirst()) }
                if state.closed { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Ends the stream: the writer's `next` returns nil (what was queued is dropped).
    public func close() {
        let waiter = state.withLock { state in
            state.closed = true
            state.queue.removeAll()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
