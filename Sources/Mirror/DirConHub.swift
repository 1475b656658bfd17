import CyclingSensors
import DBus
import RecorderInterface
import SensorHub
import Workouts

/// The sensor hub over DirCon (`cyclelog-mirror serve --dircon`): what the recorder sends the hub's apps
/// (`HubSend`: each reading re-broadcast, made by the recorder as for its Bluetooth hub, and its answers) notified to
/// each app connected over TCP that enabled them, each app a `DirConSession` over the hub's services
/// (`HubService.hub`). What an app writes to a control point goes to the recorder: the Fitness Machine's
/// (`HubAppWrote`) through the rider's own trainer control, the SC Control Point's
/// (`HubAppWroteSpeedAndCadence`) into the ride's journal and the wheel counts, its answer sent here. Knows nothing
/// of sockets: `DirConServer` hands it each connection's messages and a way to send to it.
public actor DirConHub {
    /// Where the hub's apps are passed to the recorder: a method (`HubAppJoined`, `HubAppWrote`,
    /// `HubAppWroteSpeedAndCadence`, `HubAppLeft`) and its arguments; its answer, or a throw when the recorder cannot
    /// be reached.
    public typealias Recorder = @Sendable (String, [DBusValue]) async throws(DBusError) -> [DBusValue]

    let recorder: Recorder
    nonisolated let say: @Sendable (String) -> Void
    /// At most this many apps at once (an app holds one connection).
    public nonisolated let maximumApps: Int
    /// The services as a new app finds them: what the real trainer declared, once it has, read from then on.
    private var template = DirConSession(services: HubService.hub(passingControl: true))
    private var apps: [String: App] = [:]

    struct App {
        var session: DirConSession
        let send: AsyncStream<[UInt8]>.Continuation
    }

    public init(maximumApps: Int = 4, recorder: @escaping Recorder, say: @escaping @Sendable (String) -> Void) {
        self.maximumApps = maximumApps
        self.recorder = recorder
        self.say = say
    }

    /// App `app` (its address and port) connected: taken, and the recorder told, unless `maximumApps` are there.
    public func joined(_ app: String, send: AsyncStream<[UInt8]>.Continuation) async -> Bool {
        guard apps.count < maximumApps else {
            say("a DirCon app (\(app)) was turned away: \(maximumApps) are connected already")
            return false
        }
        // The slot is taken before the recorder is asked: an app connecting meanwhile counts it.
        apps[app] = App(session: DirConSession(services: template.services), send: send)
        say("an app connected to the hub over DirCon: \(app)")
        await tellRecorder("HubAppJoined", [.string(app), .string(""), .string("DirCon")])
        // What the recorder answered (the trainer's declaration) is what this app reads first; it has sent
        // nothing yet (`DirConServer` reads its requests once this returns).
        apps[app]?.session = DirConSession(services: template.services)
        return true
    }

    /// App `app`'s connection is gone: the recorder lets the trainer go if the app held it.
    public func left(_ app: String) async {
        guard let gone = apps.removeValue(forKey: app) else { return }
        gone.send.finish()
        say("\(app) left the hub (DirCon)")
        await tellRecorder("HubAppLeft", [.string(app)])
    }

    /// One request of app `app`: answered at once; a write passed on.
    public func received(_ message: DirConMessage, from app: String) async {
        guard var entry = apps[app] else { return }
        let outcome = entry.session.answer(message)
        apps[app] = entry
        entry.send.yield(outcome.answer.encoded())
        guard let (characteristic, value) = outcome.written else { return }
        switch Characteristic(rawValue: characteristic) {
        case .scControlPoint:
            // The recorder counts the wheel from the next reading on; without one, the app is answered all the same.
            var answer = HubBroadcast.speedAndCadenceAnswer(value).answer
            do {
                let answered = try await recorder("HubAppWroteSpeedAndCadence", [.string(app), .bytes(value)])
                if let bytes = answered.first?.byteArray { answer = bytes }
            } catch {
                say("the app's wheel count could not reach the recorder: \(Self.reason(error))")
            }
            notify(characteristic, answer)
        case .fitnessMachineControlPoint:
            do {
                _ = try await recorder("HubAppWrote", [.string(app), .bytes(value)])
            } catch {
                // The app is owed an answer (FTMS 4.16.2): Operation Failed, and the rider is told why.
                say("the app's request could not reach the recorder: \(Self.reason(error))")
                if let opCode = value.first {
                    notify(characteristic, FitnessMachineControlPoint.response(to: opCode, result: .operationFailed))
                }
            }
        default:
            break
        }
    }

    /// What the recorder says: a value for the apps notified, the recorder (back) told of the apps connected.
    public func apply(_ update: RecorderUpdate) async {
        switch update {
        case .hubSend(let characteristic, let value):
            _ = template.notification(characteristic, value)
            notify(characteristic, value)
        case .appeared:
            // A recorder that started after the apps connected learns of them.
            for app in apps.keys.sorted() {
                await tellRecorder("HubAppJoined", [.string(app), .string(""), .string("DirCon")])
            }
        case .live, .changed, .event, .gone:
            break
        }
    }

    /// Closes every app's connection (the mirror is stopping).
    public func closeAll() {
        for app in apps.values { app.send.finish() }
        apps = [:]
    }

    private func notify(_ characteristic: UInt16, _ value: [UInt8]) {
        for app in apps.keys {
            guard let message = apps[app]?.session.notification(characteristic, value) else { continue }
            apps[app]?.send.yield(message.encoded())
        }
    }

    /// The recorder told; what `HubAppJoined` answers (the values the hub serves from now) taken before any app
    /// reads them.
    private func tellRecorder(_ method: String, _ arguments: [DBusValue]) async {
        do {
            guard case .array(_, let values)? = try await recorder(method, arguments).first else { return }
            for case .structure(let fields) in values {
                guard let (characteristic, value) = RecorderControl.hubValue(fields) else { continue }
                _ = template.notification(characteristic, value)
            }
        } catch {
            say("the recorder was not told (\(method)): \(Self.reason(error))")
        }
    }

    /// Why the recorder could not be told, in a rider's words.
    static func reason(_ error: DBusError) -> String {
        RecorderControl.isMissing(error) ? "no recorder is running (`cyclelog record`)" : error.message
    }
}
