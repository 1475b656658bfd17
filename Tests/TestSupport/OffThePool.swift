import Foundation

/// Runs `work`, which holds its thread (a program waited for, a server starting, a pause between polls), on a thread
/// of its own and returns its result. The Swift concurrency pool has one thread a core, two on a 2-core machine: a
/// test that held one would starve the tests running beside it in the same process.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}

/// `offThePool` for work that cannot fail.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}
