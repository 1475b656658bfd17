import Concurrency
import Synchronization
import XCTest

/// The fork-and-join helpers: every item made once, results in order, whichever core makes them.
final class ParallelTests: XCTestCase {
    /// A helper on one core and a taker on another: the taker gets every item in order, each made exactly once,
    /// whichever side made it (the helper starts after a job of its own, as the workout's build does).
    func testOrderedWorkGivesEveryItemInOrderMadeOnce() {
        let made = Mutex<[Int]>([])
        let work = OrderedWork(count: 200) { index -> Int in
            made.withLock { $0.append(index) }
            usleep(200)
            return index * 3
        }
        let (_, taken) = parallelMap(
            first: {
                usleep(10_000)
                work.help()
            }, 1
        ) { _ in (0..<work.count).map { work.take($0) } }
        XCTAssertEqual(taken[0], (0..<200).map { $0 * 3 })
        XCTAssertEqual(made.withLock { $0.sorted() }, Array(0..<200))
    }

    /// After `stop`, a helper makes nothing more; the taker still gets what it asks for.
    func testAStoppedOrderedWorkMakesNothingMoreForHelpers() {
        let made = Mutex(0)
        let work = OrderedWork(count: 10) { index -> Int in
            made.withLock { $0 += 1 }
            return index
        }
        XCTAssertEqual(work.take(0), 0)
        work.stop()
        work.help()
        XCTAssertEqual(made.withLock { $0 }, 1)
        XCTAssertEqual(work.take(1), 1)
    }
}
