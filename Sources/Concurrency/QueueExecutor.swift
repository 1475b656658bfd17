import Dispatch

/// A serial executor on one dispatch queue: an actor that makes blocking calls (a D-Bus connection, SQLite) runs on
/// a thread of its own and never holds up the cooperative pool. A D-Bus connection's dispatch source that watches
/// the bus socket runs on the same `queue`, so socket events can enter the actor synchronously (`assumeIsolated`).
public final class QueueExecutor: SerialExecutor {
    public let queue: DispatchQueue

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
