import BlueZ
import CyclingSensors
import TrainerControl
import Workouts

/// The recorder's work on a smart trainer, carried out for its `TrainerControl`: the control point found and
/// subscribed when the trainer connects, what it declares read into the trainer's capabilities, every write
/// journalled and handed to the trainer's writer (a child task of `run`, so that the actor goes on taking
/// notifications while the bus carries it), the answers and the ride's readings routed to the control, and the
/// trainer let go (Reset) before a ride is saved and before the recorder ends.
extension LiveRecorder {
    /// One write for the trainer's writer, or a mark it passes once every write before it is on the bus.
    enum TrainerWrite: Sendable {
        case write(GattCharacteristic, FitnessMachineRequest)
        case drained(CheckedContinuation<Void, Never>)
    }

    /// The trainer's link: which sensor it is and its control point.
    struct TrainerLink: Sendable {
        var wanted: String
        var journalAddress: String
        var controlPoint: GattCharacteristic
    }

    /// Takes what the rider asks of the trainer (`cyclelog target`, the dashboard's keys, D-Bus, the phone), or
    /// says why not: no trainer, or a mode it does not declare (never sent to it).
    public func steer(_ ask: TrainerAsk) async -> String? {
        switch trainerControl.ask(ask, at: clock.elapsed) {
        case .success(let actions):
            await journalTrainerTarget()
            await perform(actions)
            statusUpdates.publish(status())
            return nil
        case .failure(let refusal):
            return refusal.reason
        }
    }

    /// The rider's mode and target into the journal (`trainer erg 250`): what the ride's trainer statistics are
    /// measured against. Said when the rider changes them and when a ride opens with a mode.
    func journalTrainerTarget() async {
        let target: TrainerTarget =
            switch trainerControl.mode {
            case .erg: .erg(watts: trainerControl.targetWatts)
            case .simulation: .simulation(gradeHundredthsPercent: Int((trainerControl.gradePercent * 100).rounded()))
            case .resistance: .resistance(percent: Int(trainerControl.resistancePercent.rounded()))
            case .free: .free
            }
        guard target != .free || trainerLink != nil else { return }
        await record(RideEvent(timeMicroseconds: now(), .setting(.trainerTarget(target))))
    }

    /// The trainer's control as the status shows it; nil while no trainer has connected.
    var trainerStatus: LiveStatus.Trainer? {
        let time = clock.elapsed
        let state = trainerControl.state(at: time)
        guard state != .absent else { return nil }
        let erg = trainerControl.mode == .erg
        return LiveStatus.Trainer(
            mode: trainerControl.mode.rawValue, state: state.rawValue,
            targetPowerWatts: erg ? trainerControl.targetWatts : nil,
            effectivePowerWatts: erg ? Int(trainerControl.effectiveWatts(at: time).rounded()) : nil,
            gradePercent: trainerControl.mode == .simulation ? trainerControl.gradePercent : nil,
            resistanceLevel: trainerControl.mode == .resistance ? trainerControl.resistancePercent : nil,
            powerMatchOffsetWatts: erg ? trainerControl.powerMatchOffsetWatts : nil, message: trainerControl.message)
    }

    func perform(_ actions: [TrainerControl.Action]) async {
        for action in actions {
            switch action {
            case .write(let request): await send(request)
            case .tell(let words):
                controller.message = words
                announcements.publish(.notice(words))
            }
        }
    }

    /// Journals the request and hands it to the trainer's writer.
    private func send(_ request: FitnessMachineRequest) async {
        guard let link = trainerLink, let writes = trainerWrites else { return }
        await record(
            RideEvent(
                timeMicroseconds: now(),
                .write(
                    sensor: link.journalAddress, characteristic: Characteristic.fitnessMachineControlPoint.rawValue,
                    value: request.bytes)))
        if case .enqueued = writes.yield(.write(link.controlPoint, request)) { trainerWritesInFlight += 1 }
    }

    /// The trainer's writer: one write on the bus at a time, in order; a failed one is told to the control.
    static func writeToTrainer(_ recorder: LiveRecorder, _ writes: AsyncStream<TrainerWrite>) async {
        for await item in writes {
            switch item {
            case .write(let characteristic, let request):
                do throws(BlueZError) {
                    try await recorder.bluez.write(characteristic, request.bytes)
                } catch {
                    await recorder.trainerWriteFailed(request, error)
                }
                await recorder.trainerWriteDone()
            case .drained(let continuation):
                continuation.resume()
            }
        }
    }

    private func trainerWriteDone() { trainerWritesInFlight -= 1 }

    private func trainerWriteFailed(_ request: FitnessMachineRequest, _ error: BlueZError) async {
        let reason =
            error.attErrorCode.map { FitnessMachineControlPoint.explainATTError($0) } ?? error.description
        await perform(trainerControl.writeFailed(request, reason: reason, at: clock.elapsed))
    }

    /// A sensor connected and subscribed: when it is a trainer with a control point, its control point and status
    /// are subscribed (indications carry the answers) and the control is told what the trainer declares.
    func trainerConnected(
        _ wanted: String, _ characteristics: [GattCharacteristic], reads: [(characteristic: UInt16, value: [UInt8])]
    ) async {
        guard trainerLink == nil || trainerLink?.wanted == wanted,
            let controlPoint = characteristics.first(where: {
                $0.shortUUID == Characteristic.fitnessMachineControlPoint.rawValue
            }),
            let address = sensors.roster[wanted]?.journalAddress
        else { return }
        let status = characteristics.first {
            $0.shortUUID == Characteristic.fitnessMachineStatus.rawValue && $0.canNotify
        }
        do throws(BlueZError) {
            try await bluez.startNotify(controlPoint)
            if let status { try await bluez.startNotify(status) }
        } catch {
            let words =
                "the trainer is recorded but cannot be steered: its control point could not be subscribed "
                + "(\(error.description))"
            controller.message = words
            announcements.publish(.notice(words))
            return
        }
        trainerLink = TrainerLink(wanted: wanted, journalAddress: address, controlPoint: controlPoint)
        await perform(trainerControl.connected(Self.capabilities(reads), at: clock.elapsed))
    }

    /// What a trainer declares, from the values read when it connected.
    static func capabilities(_ reads: [(characteristic: UInt16, value: [UInt8])]) -> TrainerCapabilities {
        func value(_ characteristic: Characteristic) -> [UInt8]? {
            reads.last { $0.characteristic == characteristic.rawValue }?.value
        }
        return TrainerCapabilities(
            features: value(.fitnessMachineFeature).flatMap { try? FitnessMachineFeature(decoding: $0) },
            powerRange: value(.supportedPowerRange).flatMap { try? SupportedPowerRange(decoding: $0).range },
            resistanceRange: value(.supportedResistanceLevelRange).flatMap {
                try? SupportedResistanceLevelRange(decoding: $0).range
            },
            inclinationRange: value(.supportedInclinationRange).flatMap {
                try? SupportedInclinationRange(decoding: $0).range
            })
    }

    /// A journal event about the trainer: its link going down stops the writes until it is back.
    func trainerNoted(_ kind: RideEvent.Kind) {
        guard case .disconnected(let address) = kind, address == trainerLink?.journalAddress else { return }
        trainerControl.disconnected()
    }

    /// A notification that concerns the trainer: an answer, a status, or a reading the control steers by.
    func trainerHeard(_ sensor: String, _ characteristic: UInt16, _ value: [UInt8], _ reading: LiveReading?) async {
        guard let link = trainerLink else { return }
        let time = clock.elapsed
        if sensor == link.journalAddress {
            switch Characteristic(rawValue: characteristic) {
            case .fitnessMachineControlPoint:
                if value.starts(with: [0x80, FitnessMachineControlPoint.OpCode.reset]) { releaseAnswered() }
                return await perform(trainerControl.indicated(value, at: time))
            case .fitnessMachineStatus: return await perform(trainerControl.status(value, at: time))
            default: break
            }
        }
        guard let reading else { return }
        for item in reading.readings {
            switch item.channel {
            case .cadenceRPM: await perform(trainerControl.cadence(item.value, at: time))
            case .powerWatts where sensor == link.journalAddress:
                await perform(trainerControl.trainerPower(item.value, at: time))
            case .powerWatts: trainerControl.meterPower(item.value, at: time)
            default: break
            }
        }
    }

    /// Lets the trainer go: waits until the Reset is on the bus, then for the trainer's answer (at most
    /// `releaseAnswerWait`), so that the ride's journal ends with both.
    func releaseTrainer() async {
        let actions = trainerControl.release(at: clock.elapsed)
        guard !actions.isEmpty else { return }
        await perform(actions)
        guard let writes = trainerWrites else { return }
        await withCheckedContinuation { continuation in
            if case .enqueued = writes.yield(.drained(continuation)) { return }
            continuation.resume()
        }
        await withTaskGroup(of: Void.self) { group in
            // Real time, not the recorder's clock: this bounds a wait while the recorder stops.
            group.addTask {
                try? await Task.sleep(for: Self.releaseAnswerWait)
                await self.releaseAnswered()
            }
            await withCheckedContinuation { releaseWaiter = $0 }
            group.cancelAll()
        }
    }

    /// How long the recorder waits for the trainer's answer to its Reset (a trainer answers within a fraction of a
    /// second; one that does not is let go all the same).
    static let releaseAnswerWait = Duration.seconds(1)

    private func releaseAnswered() {
        releaseWaiter?.resume()
        releaseWaiter = nil
    }
}

extension TrainerMode {
    /// The mode a start's `control=` asks for (`none`: free).
    init(start choice: StartRequest.TrainerChoice) {
        switch choice {
        case .erg: self = .erg
        case .sim: self = .simulation
        case .resistance: self = .resistance
        case .none: self = .free
        }
    }
}
