import Dispatch

/// A serial executor on one dispatch queue: the connection actor runs on it, and so does the dispatch source
/// that watches the bus socket, so socket events can enter the actor synchronously (`assumeIsolated`).
public final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
