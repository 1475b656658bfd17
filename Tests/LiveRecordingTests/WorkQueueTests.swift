import Testing

@testable import LiveRecording

/// The queue a sensor's link jobs and the trainer's writes go through: in order, one at a time, and it says when
/// what was queued has been carried out.
@Suite struct WorkQueueTests {
    /// What the serving task did, in order, and how many items were being carried out at once.
    actor Log {
        var done: [Int] = []
        var running = 0
        var mostAtOnce = 0

        func begin() {
            running += 1
            mostAtOnce = max(mostAtOnce, running)
        }

        func end(_ item: Int) {
            running -= 1
            done.append(item)
        }
    }

    @Test func itemsAreCarriedOutInOrderOneAtATimeAndDrainedWaitsForThem() async {
        let queue = WorkQueue<Int>()
        let log = Log()
        #expect(queue.isIdle)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await queue.serve { item in
                    await log.begin()
                    // Each item takes a while, so that a second one would overlap it if the queue let it.
                    await Task.yield()
                    try? await Task.sleep(for: .milliseconds(item % 3))
                    await log.end(item)
                }
            }
            for item in 0..<50 { #expect(queue.enqueue(item)) }
            #expect(!queue.isIdle)
            await queue.drained()
            // Everything queued before the mark is done, in the order it was queued, never two at once.
            #expect(await log.done == Array(0..<50))
            #expect(await log.mostAtOnce == 1)
            #expect(queue.isIdle)
            group.cancelAll()
        }
    }

    @Test func aQueueWhoseTaskEndedTakesNothingAndIsNotWaitedOn() async {
        let queue = WorkQueue<Int>()
        let serving = Task { await queue.serve { _ in } }
        serving.cancel()
        await serving.value
        #expect(!queue.enqueue(1))
        #expect(queue.isIdle)
        // Returns at once: nobody is left to pass the mark.
        await queue.drained()
    }
}
