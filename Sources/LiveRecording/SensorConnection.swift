import BlueZ

/// One connection attempt of one sensor, carried out on the bus: the link (connect, then wait for its services), the
/// description (its battery, the values read once), the subscription to its measurements. It holds no rule: each
/// step is told to `report` as it ends, and whoever gives it to the recorder's core answers whether the attempt goes
/// on (a failed link ends it; so does a sensor the core has no address to journal under).
enum SensorConnection {
    /// A step of the attempt, as it ended.
    enum Step: Sendable {
        /// About to connect (discovery is stopped first: a controller that scans connects slowly).
        case starting
        /// Not connected; what to show, if anything.
        case linkFailed(line: String?)
        /// Connected; the device's characteristics.
        case linked([GattCharacteristic])
        case described(Description)
        /// The measurements subscribed, or what went wrong; every characteristic and the values read, for a trainer's
        /// control point to be subscribed next.
        case subscribed(
            measurements: [GattCharacteristic], failure: String?, characteristics: [GattCharacteristic],
            reads: [(characteristic: UInt16, value: [UInt8])])
    }

    /// What describes a connected sensor, read once: its battery and the values `readOnConnect` lists.
    struct Description: Sendable {
        var batteryPercent: Int?
        var reads: [(characteristic: UInt16, value: [UInt8])] = []
    }

    /// Carries out the attempt on the device at `devicePath`, telling `report` each step; stops when it answers false.
    static func attempt(
        _ bus: any SensorBus, devicePath: String, label: String, isolation: isolated (any Actor)? = #isolation,
        report: (Step) async -> Bool
    ) async {
        guard await report(.starting) else { return }
        let characteristics: [GattCharacteristic]
        do {
            try await bus.connect(devicePath)
        } catch {
            _ = await report(.linkFailed(line: error.description))
            return
        }
        guard await bus.waitForServices(devicePath, timeout: .seconds(10)) else {
            _ = await report(
                .linkFailed(line: "\(label) connected, but its services were not resolved within 10 s: trying again"))
            return
        }
        characteristics = await bus.characteristics(ofDevice: devicePath)
        guard await report(.linked(characteristics)) else { return }
        let description = await describe(bus, devicePath: devicePath, characteristics)
        guard await report(.described(description)) else { return }
        let measurements = measurements(among: characteristics)
        let failure = await subscribe(bus, measurements, label: label)
        _ = await report(
            .subscribed(
                measurements: measurements, failure: failure, characteristics: characteristics,
                reads: description.reads))
    }

    /// Carries out one of a sensor's link jobs: a connection attempt on `device` (nil: the sensor has no device
    /// BlueZ knows of, and the attempt fails at once), its steps told to `report` with the attempt's number; a
    /// resubscription; a disconnection.
    static func carryOut(
        _ job: SensorSupervisor.Job, _ bus: any SensorBus, device: (path: String, label: String)?,
        isolation: isolated (any Actor)? = #isolation, report: (_ attempt: Int, Step) async -> Bool
    ) async {
        switch job {
        case .connect(let attempt):
            guard let device else {
                _ = await report(attempt, .linkFailed(line: nil))
                return
            }
            await Self.attempt(bus, devicePath: device.path, label: device.label) { await report(attempt, $0) }
        case .resubscribe(let characteristics):
            for characteristic in characteristics {
                try? await bus.stopNotify(characteristic)
                try? await bus.startNotify(characteristic)
            }
        case .disconnect(let path): try? await bus.disconnect(path)
        }
    }

    /// The adapter the rider named (or the first), powered on.
    static func poweredAdapter(_ bus: any SensorBus, named name: String?) async throws(LiveRecordingError)
        -> BluetoothAdapter
    {
        let adapter = try LiveRecorder.chooseAdapter(await bus.adapters, named: name)
        if !adapter.powered {
            do { try await bus.powerOn(adapter.path) } catch { throw LiveRecordingError(.bluetooth, error.description) }
        }
        return adapter
    }

    /// Discovery of the cycling services turned on or off through the adapter at `adapterPath`; BlueZ's reason
    /// when it refused, or nil.
    static func discovery(_ on: Bool, _ bus: any SensorBus, adapterPath: String) async -> String? {
        do {
            if on {
                try await bus.startDiscovery(adapterPath, services: LiveRecorder.services)
            } else {
                try await bus.stopDiscovery(adapterPath)
            }
            return nil
        } catch {
            return error.description
        }
    }

    static func describe(_ bus: any SensorBus, devicePath: String, _ characteristics: [GattCharacteristic]) async
        -> Description
    {
        // Battery1.Percentage stands in for the Battery Level characteristic BlueZ hides (its battery plugin takes the
        // Battery Service for itself).
        var description = Description(batteryPercent: await bus.device(devicePath)?.batteryPercent)
        for characteristic in characteristics {
            guard let uuid = characteristic.shortUUID, SensorSupervisor.readOnConnect.contains(uuid),
                characteristic.canRead
            else { continue }
            if let value = try? await bus.read(characteristic) { description.reads.append((uuid, value)) }
        }
        return description
    }

    /// The measurements among a device's characteristics.
    static func measurements(among characteristics: [GattCharacteristic]) -> [GattCharacteristic] {
        characteristics.filter { $0.canNotify && $0.shortUUID.map(SensorSupervisor.measurements.contains) == true }
    }

    /// Subscribes to `measurements`; what went wrong, or nil.
    static func subscribe(_ bus: any SensorBus, _ measurements: [GattCharacteristic], label: String) async -> String? {
        // A problem of the sensor's own, not of BlueZ: said in words, with no D-Bus error name.
        guard !measurements.isEmpty else { return "\(label) offers no power, speed, cadence or heart-rate measurement" }
        do {
            for characteristic in measurements { try await bus.startNotify(characteristic) }
        } catch {
            return error.description
        }
        return nil
    }
}
