import Dispatch
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
