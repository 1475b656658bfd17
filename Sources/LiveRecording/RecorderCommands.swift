import DBus
import RecorderInterface
import StructuredWorkouts
import TrainerControl
import Workouts

/// Every command a client sends (`RecorderCommand`: the D-Bus object's methods and `Control`, the dashboard's keys)
/// carried out one way.
extension LiveRecorder {
    /// Why a command was not carried out, in the rider's words.
    public enum CommandRefusal: Error, Sendable, Equatable {
        /// An argument is missing or out of its bounds (D-Bus InvalidArgs).
        case invalid(String)
        /// Not now: the ride's state, the trainer or the workout says no.
        case refused(String)
        /// A start with no sensor connected to start with.
        case noSensors(String)

        public var reason: String {
            switch self {
            case .invalid(let reason), .refused(let reason), .noSensors(let reason): reason
            }
        }
    }

    /// Carries out `command`: the new workout's id for a start (0 when armed for the first pedal stroke), else 0.
    /// A start reads its style against the presets and, to start now, waits briefly for a sensor that is
    /// connecting.
    @discardableResult
    public func perform(_ command: RecorderCommand) async throws(CommandRefusal) -> Int64 {
        switch command {
        case .start(let style):
            let request: StartRequest
            do throws(StartRequest.Problem) {
                request = try StartRequest(style: style, presets: await presets())
            } catch {
                throw .invalid(error.description)
            }
            if request.when == .now { await waitForASensor() }
            do throws(StartRefusal) { return try await start(request) } catch {
                switch error {
                case .refused(let reason): throw .refused(reason)
                case .noSensors(let reason): throw .noSensors(reason)
                }
            }
        case .control(let workoutControl):
            try refused(await control(workoutControl))
        case .marker(let text):
            try refused(await control(.marker(text)))
        case .intake(let intake):
            try refused(await control(.intake(intake)))
        case .steer(let steer):
            let ask: TrainerAsk
            do throws(DBusError) { ask = try steer.ask() } catch { throw .invalid(error.message) }
            try refused(await self.steer(ask))
        case .player(let player):
            let playerControl: PlayerControl
            let intensityPercent = core.guide?.player.intensityPercent ?? 100
            do throws(DBusError) {
                playerControl = try player.control(intensityPercent: intensityPercent)
            } catch {
                throw .invalid(error.message)
            }
            try refused(await self.player(playerControl))
        case .undo(let action):
            if case .failure(let refusal) = await undo(action) { throw refusal }
        case .endNow:
            try refused(await control(.end, endsAtOnce: true))
        }
        return 0
    }

    private func refused(_ refusal: String?) throws(CommandRefusal) {
        if let refusal { throw .refused(refusal) }
    }
}
