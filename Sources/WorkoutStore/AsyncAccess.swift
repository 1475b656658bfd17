import Dispatch

/// The database from async code. SQLite's calls block (a busy database waits up to 5 s for its lock), and a thread
/// of Swift's cooperative pool that blocks holds up every task scheduled on it: on this 2-core class of machine, two
/// slow reads would stop a server. So async code never calls the store directly; it hands the calls to one of these,
/// which run them on threads made for blocking work and resume the caller with the answer. (The live recorder's
/// `RideStore` is an actor on a thread of its own instead: its writes must stay in order.)
extension WorkoutStore {
    /// `work` on a thread that may block; its answer or its error, to the caller.
    public static func blocking<T: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
            DispatchQueue.global().async {
                do throws(Failure) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// `work` on this store, on a thread that may block.
    public func call<T: Sendable, Failure: Error>(
        _ work: @escaping @Sendable (WorkoutStore) throws(Failure) -> T
    ) async throws(Failure) -> T {
        try await Self.blocking { () throws(Failure) -> T in try work(self) }
    }
}
