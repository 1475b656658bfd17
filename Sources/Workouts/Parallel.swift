import Dispatch
import Glibc
import Synchronization

/// Runs `work` for each of `0..<count` on the machine's cores and returns the results in order. A fork and a join:
/// every item is done when it returns, nothing outlives the call, and on one core the items simply run one after
/// another (no item waits for another, so nothing can deadlock).
public func parallelMap<Result: Sendable>(_ count: Int, _ work: @Sendable (Int) -> Result) -> [Result] {
    let results = Mutex<[Result?]>(Array(repeating: nil, count: count))
    DispatchQueue.concurrentPerform(iterations: count) { index in
        let result = work(index)
        results.withLock { $0[index] = result }
    }
    return results.withLock { $0.map { $0! } }
}

/// One piece of work beside `count` pieces of another kind, all shared out as `parallelMap` does: the long one
/// (building a workout, analysing a ride) overlaps the many short ones (packing its chunks). Returns the first's
/// result and the others' in order.
public func parallelMap<First: Sendable, Result: Sendable>(
    first: @Sendable () -> First, _ count: Int, _ work: @Sendable (Int) -> Result
) -> (first: First, rest: [Result]) {
    let firstResult = Mutex<First?>(nil)
    let rest = parallelMap(1 + count) { item -> Result? in
        guard item > 0 else {
            let value = first()
            firstResult.withLock { $0 = value }
            return nil
        }
        return work(item - 1)
    }
    return (firstResult.withLock { $0.take()! }, rest.dropFirst().map { $0! })
}

/// Items `0..<count` made by whichever thread is free, taken in order by one: for a long job on one core
/// (building a workout) beside a taker on another (writing the journal's pieces in order), each core making
/// items once its own work is done, so that neither waits while the other has work left.
public final class OrderedWork<Item: Sendable>: Sendable {
    private struct State {
        /// The next item nobody has started.
        var next = 0
        /// Items made by a helper, not taken yet.
        var made: [Int: Item] = [:]
        var stopped = false
    }

    /// What a taker does next.
    private enum Next {
        case ready(Item)
        case make(Int)
        case wait
    }

    public let count: Int
    private let state = Mutex(State())
    private let make: @Sendable (Int) -> Item

    public init(count: Int, make: @escaping @Sendable (Int) -> Item) {
        self.count = count
        self.make = make
    }

    /// Makes the items nobody has started, until none is left or `stop` was called.
    public func help() {
        while let index = state.withLock({ state -> Int? in
            guard !state.stopped, state.next < count else { return nil }
            defer { state.next += 1 }
            return state.next
        }) {
            let item = make(index)
            state.withLock { $0.made[index] = item }
        }
    }

    /// Item `index` (taken in order, each once): made by a helper, or made here, with any item before it that
    /// nobody has started.
    public func take(_ index: Int) -> Item {
        while true {
            let next = state.withLock { state -> Next in
                if let item = state.made.removeValue(forKey: index) { return .ready(item) }
                guard state.next <= index else { return .wait }
                defer { state.next += 1 }
                return .make(state.next)
            }
            switch next {
            case .ready(let item):
                return item
            case .make(let started):
                let item = make(started)
                if started == index { return item }
                state.withLock { $0.made[started] = item }
            case .wait:
                // A helper is making it: one item takes about a millisecond.
                usleep(50)
            }
        }
    }

    /// No more items are wanted: helpers stop after the one in hand.
    public func stop() {
        state.withLock { $0.stopped = true }
    }
}
