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
