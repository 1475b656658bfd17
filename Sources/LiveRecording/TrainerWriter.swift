import BlueZ
import CyclingSensors

/// The trainer's writes, one on the bus at a time and in order (a trainer takes a request only once it has answered
/// the one before). The recorder's `execute` queues them; one child task of its run serves the queue.
struct TrainerWriter: Sendable {
    struct Write: Sendable {
        let characteristic: GattCharacteristic
        let request: FitnessMachineRequest
    }

    let queue = WorkQueue<Write>()

    /// Queues a write; false when the writer has ended (the ride is over).
    func enqueue(_ characteristic: GattCharacteristic, _ request: FitnessMachineRequest) -> Bool {
        queue.enqueue(Write(characteristic: characteristic, request: request))
    }

    /// Serves the queue until its task is cancelled: `taken` is told each write the trainer took (BlueZ's
    /// WriteValue returned), `failed` a write the bus refused, with BlueZ's reason (an ATT error in the Fitness
    /// Machine Control Point's words).
    func serve(
        _ bus: any SensorBus, taken: @Sendable (FitnessMachineRequest) async -> Void,
        failed: @Sendable (FitnessMachineRequest, String) async -> Void
    ) async {
        await queue.serve { write in
            do throws(BlueZError) {
                try await bus.write(write.characteristic, write.request.bytes)
                await taken(write.request)
            } catch {
                await failed(
                    write.request,
                    error.attErrorCode.map { FitnessMachineControlPoint.explainATTError($0) } ?? error.description)
            }
        }
    }
}
