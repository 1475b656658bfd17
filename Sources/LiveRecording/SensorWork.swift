import BlueZ
import Foundation

/// The recorder's work on its sensors, carried out for the `SensorSupervisor`: the connect sequence (link,
/// description, subscription), re-subscriptions and disconnections, the scan that finds the sensors when none is
/// named, and discovery on and off (with the release in `SensorSupervisor`, the only code that calls BlueZ); and a
/// start's wait for a first sensor after a launch by D-Bus activation.
extension LiveRecorder {
    /// How long a start now waits for a sensor that is being connected (a trainer that was off a moment ago, a
    /// strap just put on): as an armed start waits for the first pedal stroke, not refused at once.
    public static let connectingGrace: Duration = .seconds(10)

    /// A start now, with no sensor connected, waits until one is: for up to `activatedGraceSeconds` after a launch
    /// that the start itself brought up (D-Bus activation by `cyclelog start` or a launcher's action), and for up
    /// to `connectingGrace` while a sensor is being connected; otherwise it is refused at once.
    public func waitForASensor() async {
        guard !controller.isOver, !sensors.anyConnected else { return }
        let launchGrace = Duration.seconds(options.activatedGraceSeconds)
        let until: Duration
        if clock.elapsed < launchGrace {
            until = max(launchGrace, sensors.connecting.isEmpty ? .zero : clock.elapsed + Self.connectingGrace)
        } else if !sensors.connecting.isEmpty {
            until = clock.elapsed + Self.connectingGrace
        } else {
            return
        }
        await withTaskGroup(of: Void.self) { group in
            // Whichever comes first wakes the wait: the end of the grace, or a sensor connecting (`perform`).
            group.addTask { [clock] in
                try? await clock.sleep(for: until - clock.elapsed)
                await self.wakeSensorWaiters()
            }
            await withCheckedContinuation { sensorWaiters.append($0) }
            group.cancelAll()
        }
    }

    func wakeSensorWaiters() {
        for waiter in sensorWaiters { waiter.resume() }
        sensorWaiters = []
    }

    func perform(_ job: SensorSupervisor.Job, for wanted: String) async {
        defer { sensorJobsInFlight -= 1 }
        switch job {
        case .connect(let attempt): await connect(wanted, attempt: attempt)
        case .resubscribe(let characteristics):
            for characteristic in characteristics {
                try? await bluez.stopNotify(characteristic)
                try? await bluez.startNotify(characteristic)
            }
        case .disconnect(let path): try? await bluez.disconnect(path)
        }
    }

    /// Connection attempt `attempt` of one sensor: link, description, subscription, each reported to the
    /// supervisor as it ends. After every `await` the sensor is looked up again by what the rider named it, and
    /// its link ignores the report of an attempt it no longer waits for.
    func connect(_ wanted: String, attempt: Int) async {
        guard let sensor = sensors.roster[wanted], let path = sensor.devicePath else {
            return await perform(sensors.apply(.failed(attempt: attempt), to: wanted, at: clock.elapsed))
        }
        await setDiscovery(false)
        if let address = sensor.address { for observer in options.observers { observer.addSensor(address) } }
        let characteristics: [GattCharacteristic]
        switch await SensorSupervisor.link(bluez, devicePath: path, label: sensor.label) {
        case .failed(let line):
            if let line { controller.message = line }
            return await perform(sensors.apply(.failed(attempt: attempt), to: wanted, at: clock.elapsed))
        case .linked(let found):
            characteristics = found
            await perform(sensors.apply(.linkEstablished(attempt: attempt), to: wanted, at: clock.elapsed))
        }
        guard let address = sensors.roster[wanted]?.journalAddress else { return }
        for observer in options.observers { observer.noteCharacteristics(characteristics, of: address) }
        let description = await SensorSupervisor.describe(bluez, devicePath: path, characteristics)
        await perform(sensors.described(wanted, description))
        await perform(controller.batteries(sensors.batteries))
        let measurements = SensorSupervisor.measurements(among: characteristics)
        let failure = await SensorSupervisor.subscribe(bluez, measurements, label: sensor.label)
        await perform(sensors.subscribed(wanted, attempt: attempt, measurements, failure: failure, at: clock.elapsed))
        if failure == nil, sensors.roster[wanted]?.link.state.isConnected == true {
            await trainerConnected(wanted, characteristics, reads: description.reads)
        }
    }

    /// No sensor named: the cycling sensors a scan finds are the ride's.
    func findSensors() async throws(LiveRecordingError) {
        guard options.auto == nil else { throw SensorSupervisor.nothingToWaitFor }
        await setDiscovery(true)
        try? await clock.sleep(for: .seconds(options.discoverySeconds))
        try sensors.want(found: await bluez.devices, scanningSeconds: options.discoverySeconds)
    }

    func setDiscovery(_ on: Bool) async {
        guard on != sensors.discovering, let adapterPath = sensors.adapterPath else { return }
        do {
            if on {
                try await bluez.startDiscovery(adapterPath, services: Self.services)
            } else {
                try await bluez.stopDiscovery(adapterPath)
            }
            sensors.discovering = on
        } catch {
            controller.message = error.description
        }
    }
}
