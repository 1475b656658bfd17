import DBus
import LiveRecording
import Logging
import RecorderInterface
import ServiceLifecycle
import Synchronization
import Workouts

/// `cyclelog record` as a service under swift-service-lifecycle: the recorder, and beside it as child tasks the
/// D-Bus control object's properties, systemd's notify protocol (READY, STATUS, the watchdog) and the graceful
/// shutdown that SIGINT and SIGTERM start, which ends and saves the ride. Everything it starts ends with it.
public final class RecordingService: Service, Sendable {
    public let recorder: LiveRecorder
    private let exportControl: @Sendable () async -> RecorderControl.Exported?
    private let serviceManager: ServiceManagerNotifier?
    private let logger: Logger
    private let outcome = Mutex<Result<WorkoutSummary?, LiveRecordingError>?>(nil)

    /// `exportControl` exports the control object (`RecorderControl.export`), or gives nil without one. It is called
    /// as the service starts, once the service group takes SIGINT and SIGTERM: the recorder is on the bus only when
    /// a signal that comes next saves the ride (one sent sooner would have ended the process before it could).
    public init(
        recorder: LiveRecorder, exportControl: @escaping @Sendable () async -> RecorderControl.Exported?,
        serviceManager: ServiceManagerNotifier?, logger: Logger
    ) {
        self.recorder = recorder
        self.exportControl = exportControl
        self.serviceManager = serviceManager
        self.logger = logger
    }

    /// What the ride came to once `run` returned: the saved summary, nil when cancelled, or why it failed.
    public var result: Result<WorkoutSummary?, LiveRecordingError>? { outcome.withLock { $0 } }

    public func run() async throws {
        let waiting = recorder.options.auto != nil
        let control = await exportControl()
        serviceManager?.notify("READY=1\nSTATUS=" + (waiting ? "waiting for the rider to pedal" : "recording"))
        logger.info("recording", metadata: ["auto": "\(waiting)"])
        let result: Result<WorkoutSummary?, LiveRecordingError> = await withTaskGroup(of: Void.self) { group in
            if let control {
                group.addTask { [recorder] in await RecorderControl.serve(control, for: recorder) }
            }
            if let serviceManager {
                group.addTask { [recorder] in
                    for await case .notice(let notice) in recorder.announcements.subscribe() {
                        serviceManager.notify("STATUS=\(notice)")
                    }
                }
                if let interval = serviceManager.watchdogInterval {
                    group.addTask { [recorder] in await Self.answerWatchdog(serviceManager, interval, recorder) }
                }
            }
            group.addTask { [recorder, serviceManager, logger] in
                // SIGINT or SIGTERM (or the service group ending): save the ride in progress.
                guard (try? await gracefulShutdown()) != nil else { return }
                logger.info("stopping: saving the ride in progress")
                serviceManager?.notify("STOPPING=1")
                await recorder.stop()
            }
            let result: Result<WorkoutSummary?, LiveRecordingError>
            do throws(LiveRecordingError) {
                result = .success(try await recorder.run())
            } catch {
                result = .failure(error)
            }
            group.cancelAll()
            return result
        }
        // Said at debug level: the program that runs the service says the failure itself, in its words, once.
        if case .failure(let error) = result { logger.debug("the ride failed", metadata: ["reason": "\(error)"]) }
        outcome.withLock { $0 = result }
    }

    /// Answers systemd's watchdog twice per interval while the recorder's loop is turning; a recorder stuck for
    /// longer than the interval stops answering and systemd restarts the service.
    static func answerWatchdog(
        _ serviceManager: ServiceManagerNotifier, _ interval: Duration, _ recorder: LiveRecorder
    ) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval / 2)
            if ContinuousClock.now - (await recorder.lastTick) < interval { serviceManager.notify("WATCHDOG=1") }
        }
    }
}
