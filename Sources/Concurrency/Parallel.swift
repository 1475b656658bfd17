import Dispatch
import Synchronization

/// Runs `work` for each of `0..<count` on the machine's cores and returns the results in order. A fork and a join:
/// every item is done when it returns, nothing outlives the call, and on one core the items simply run one after
/// another (no item waits for another, so nothing can deadlock). Inlinable, so that it is specialized for each
/// caller's types in the caller's module (the power curve and the replay are measured paths).
@inlinable
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
@inlinable
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
        /// The taker, asleep until a helper has made the item it waits for.
        var waiting: (index: Int, wake: DispatchSemaphore)?
    }

    /// What a taker does next.
    private enum Next {
        case ready(Item)
        case make(Int)
        case wait(DispatchSemaphore)
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
            let taker = state.withLock { state -> DispatchSemaphore? in
                state.made[index] = item
                guard let waiting = state.waiting, waiting.index == index else { return nil }
                state.waiting = nil
                return waiting.wake
            }
            taker?.signal()
        }
    }

    /// Item `index` (taken in order, each once): made by a helper, or made here, with any item before it that
    /// nobody has started.
    public func take(_ index: Int) -> Item {
        while true {
            let next = state.withLock { state -> Next in
                if let item = state.made.removeValue(forKey: index) { return .ready(item) }
                guard state.next <= index else {
                    // A helper is making it: sleep until it is made (`help` wakes the taker).
                    let wake = DispatchSemaphore(value: 0)
                    state.waiting = (index, wake)
                    return .wait(wake)
                }
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
            case .wait(let wake):
                wake.wait()
            }
        }
    }

    /// No more items are wanted: helpers stop after the one in hand.
    public func stop() {
        state.withLock { $0.stopped = true }
    }
}
