import BlueZ
import CyclingSensors

/// The trainer's writes, one on the bus at a time and in order: a trainer takes a request only once it has answered
/// the one before. The recorder's `execute` queues them; one child task of its run serves the queue.
struct TrainerWriter: Sendable {
    private enum Item: Sendable {
        case write(GattCharacteristic, FitnessMachineRequest)
        /// A mark passed once every write before it is on the bus.
        case drained(CheckedContinuation<Void, Never>)
    }

    private let items: AsyncStream<Item>
    private let queue: AsyncStream<Item>.Continuation

    init() { (items, queue) = AsyncStream.makeStream() }

    /// Queues a write; false when the writer has ended (the ride is over).
    func enqueue(_ characteristic: GattCharacteristic, _ request: FitnessMachineRequest) -> Bool {
        if case .enqueued = queue.yield(.write(characteristic, request)) { return true }
        return false
    }

    /// Returns once every write queued before it is on the bus, or at once when the writer has ended.
    func drained() async {
        await withCheckedContinuation { continuation in
            if case .enqueued = queue.yield(.drained(continuation)) { return }
            continuation.resume()
        }
    }

    /// Serves the queue until its task is cancelled: `failed` is told a write the bus refused, with BlueZ's reason
    /// (an ATT error in the Fitness Machine Control Point's words); `done` the end of each write.
    func serve(
        _ bus: any SensorBus, failed: @Sendable (FitnessMachineRequest, String) async -> Void,
        done: @Sendable () async -> Void
    ) async {
        for await item in items {
            switch item {
            case .write(let characteristic, let request):
                do throws(BlueZError) {
                    try await bus.write(characteristic, request.bytes)
                } catch {
                    await failed(
                        request,
                        error.attErrorCode.map { FitnessMachineControlPoint.explainATTError($0) } ?? error.description)
                }
                await done()
            case .drained(let continuation):
                continuation.resume()
            }
        }
    }
}
