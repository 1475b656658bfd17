import Synchronization

/// Work carried out one item after the other, in the order it was queued, by the one task that serves it: a
/// sensor's link jobs (a connection attempt is several BlueZ calls that must not interleave with a resubscription),
/// the trainer's writes (a trainer takes a request only once it has answered the one before). The recorder's
/// `execute` queues and goes on; the queue knows what is left of it.
final class WorkQueue<Item: Sendable>: Sendable {
    private enum Entry: Sendable {
        case item(Item)
        /// A mark passed once every item before it has been carried out.
        case mark(CheckedContinuation<Void, Never>)
    }

    private let entries: AsyncStream<Entry>
    private let queue: AsyncStream<Entry>.Continuation
    /// Items queued and not yet carried out to their end.
    private let left = Mutex(0)

    init() { (entries, queue) = AsyncStream.makeStream() }

    /// Queues `item`; false when the queue has ended (its task is over, the ride with it).
    @discardableResult
    func enqueue(_ item: Item) -> Bool {
        left.withLock { $0 += 1 }
        if case .enqueued = queue.yield(.item(item)) { return true }
        left.withLock { $0 -= 1 }
        return false
    }

    /// Whether every item queued so far has been carried out.
    var isIdle: Bool { left.withLock { $0 == 0 } }

    /// Returns once every item queued before it has been carried out, or at once when the queue has ended.
    func drained() async {
        await withCheckedContinuation { continuation in
            if case .enqueued = queue.yield(.mark(continuation)) { return }
            continuation.resume()
        }
    }

    /// Carries out each item with `perform`, one after the other, until the serving task is cancelled.
    func serve(_ perform: @Sendable (Item) async -> Void) async {
        for await entry in entries {
            switch entry {
            case .item(let item):
                await perform(item)
                left.withLock { $0 -= 1 }
            case .mark(let continuation):
                continuation.resume()
            }
        }
    }
}
