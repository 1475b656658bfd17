import ArgumentParser
import BlueZ
import CyclingSensors
import Foundation
import LiveRecording
import Recording
import WorkoutStore
import Workouts

/// `cyclelog calibrate SENSOR`: zero offset through the power meter's control point, and its crank length.
struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Zeroes a power meter (offset compensation) and sets or reads its crank length.",
        discussion: """
            Unclip and keep the cranks still first (most meters want the measuring crank arm straight down).
            Uses Start Enhanced Offset Compensation when the meter's features say it has it, else Start Offset
            Compensation. The answer is explained, stored, and shown with the next workout and in `cyclelog
            sensors`. With --crank-length the length is sent, read back and remembered; --skip-zero leaves the
            offset alone.
            """)

    @Argument(help: "The power meter's address or name (remembered or in range).")
    var sensor: String

    @Option(help: "Set the crank length in millimetres (half millimetres allowed, such as 172.5).")
    var crankLength: Double?

    @Flag(help: "Only read the crank length the meter has.")
    var readCrankLength = false

    @Flag(help: "Do not zero the offset (only set or read the crank length).")
    var skipZero = false

    @Option(help: "Seconds to look for the meter when BlueZ does not know it yet.")
    var scanTimeout: Double = 10

    @Flag(help: "One JSON object per answer: time, operation, succeeded, value, unit, explanation.")
    var json = false

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var buses: BusOptions

    func validate() throws {
        if let crankLength, !CalibrationText.isCrankLength(crankLength) {
            throw ValidationError("--crank-length is 110 to 220 mm in half millimetres, such as 172.5")
        }
        if skipZero && crankLength == nil && !readCrankLength {
            throw ValidationError("--skip-zero leaves nothing to do without --crank-length or --read-crank-length")
        }
    }

    func run() async throws {
        let store = try database.open()
        let remembered = try store.knownSensors().first { $0.isCalled(sensor) }
        let bluez = try await buses.connectBlueZ()
        let device = try await findDevice(bluez, wanted: remembered?.address ?? sensor)
        let name = remembered?.name ?? device.displayName
        do {
            try await bluez.connect(device.path)
        } catch {
            throw ExitMessage.make(error.description, status: 1)
        }
        let outcome: Result<Bool, any Error>
        do {
            outcome = .success(try await calibrate(bluez, device, name, store))
        } catch {
            outcome = .failure(error)
        }
        // Let go of the meter before leaving: BlueZ keeps a link a client made after the client is gone.
        try? await bluez.disconnect(device.path)
        if try !outcome.get() { throw ExitCode(1) }
    }

    /// Zeroes and sets the crank length as asked; false when the meter refused any of it.
    private func calibrate(_ bluez: BlueZClient, _ device: BluetoothDevice, _ name: String, _ store: WorkoutStore)
        async throws -> Bool
    {
        guard await bluez.waitForServices(device.path) else {
            throw ExitMessage.make("\(name) connected but did not show its services within 10 s; try again", status: 1)
        }
        let control: PowerMeterControl
        do {
            control = try await PowerMeterControl.open(bluez, device: device.path, name: name)
        } catch {
            throw ExitMessage.make(error.description, status: 1)
        }
        let features = control.features ?? []
        if let feature = control.feature, feature.sentOctets < 4, !json {
            // A Wahoo KICKR sends 2 octets: bits 16 to 31 (torque context, enhanced offset compensation) unknown.
            let unknown = [
                (CyclingPowerFeature.Features.torqueBasedMeasurementContext, "whether it measures torque or force"),
                (.enhancedOffsetCompensation, "whether it has enhanced offset compensation"),
            ].filter { !feature.knows($0.0) }.map(\.1)
            if !unknown.isEmpty {
                print(
                    "\(name): its Cycling Power Feature is short (\(feature.sentOctets) of 4 octets), so "
                        + unknown.joined(separator: " and ") + " is not known; the plain request is used")
            }
        }
        var failed = false
        /// Sends one request, then explains, stores and prints the answer.
        func perform(_ operation: String, _ request: [UInt8]) async throws -> Calibration {
            let time = wallClockMicroseconds()
            var calibration: Calibration
            do {
                let response = try await control.send(request)
                let outcome = CyclingPowerControlPoint.outcome(
                    of: response.message, torqueBased: features.contains(.torqueBasedMeasurementContext))
                calibration = Calibration(
                    address: device.address, timeMicroseconds: time, operation: operation,
                    succeeded: outcome.succeeded, value: outcome.value, unit: outcome.unit,
                    explanation: outcome.explanation, response: response.bytes)
            } catch {
                calibration = Calibration(
                    address: device.address, timeMicroseconds: time, operation: operation, succeeded: false,
                    explanation: error.description)
            }
            failed = failed || !calibration.succeeded
            try store.addCalibration(calibration)
            if json {
                print(CalibrationText.object(calibration).rendered())
            } else {
                print("\(name): \(calibration.explanation)")
            }
            return calibration
        }

        if !skipZero {
            let enhanced = features.contains(.enhancedOffsetCompensation)
            if !enhanced && !features.contains(.offsetCompensation) && !json {
                print("\(name): its features do not list offset compensation; asking anyway")
            }
            _ = try await perform(
                enhanced ? "enhancedOffsetCompensation" : "offsetCompensation",
                CyclingPowerControlPoint.request(
                    enhanced
                        ? CyclingPowerControlPoint.OpCode.startEnhancedOffsetCompensation
                        : CyclingPowerControlPoint.OpCode.startOffsetCompensation))
        }
        if crankLength != nil && !features.contains(.crankLengthAdjustment) && !json {
            print("\(name): its features do not list crank length adjustment; asking anyway")
        }
        if let crankLength {
            _ = try await perform(
                "setCrankLength", CyclingPowerControlPoint.setCrankLength(halfMillimetres: UInt16(crankLength * 2)))
        }
        if crankLength != nil || readCrankLength {
            let readBack = try await perform(
                "requestCrankLength",
                CyclingPowerControlPoint.request(CyclingPowerControlPoint.OpCode.requestCrankLength))
            if let crankLength, readBack.succeeded {
                // What the meter kept is what counts: some round to whole millimetres or refuse silently.
                if readBack.value != crankLength {
                    failed = true
                    printError(
                        "cyclelog: \(name) kept \(readBack.value.map(CalibrationText.millimetres) ?? "-"), "
                            + "not \(CalibrationText.millimetres(crankLength))")
                } else {
                    try store.rememberSensors([(address: device.address, name: name)], at: wallClockMicroseconds())
                    try store.updateKnownSensor(device.address, crankLengthMillimetres: .some(crankLength))
                }
            }
        }
        return !failed
    }

    /// The meter among BlueZ's devices, scanning for it first when BlueZ does not know it.
    private func findDevice(_ bluez: BlueZClient, wanted: String) async throws -> BluetoothDevice {
        let search = try await SensorSearch.open(bluez, adapterName: buses.adapter)
        if let found = await search.find(wanted, within: .seconds(scanTimeout), services: [0x1818]) { return found }
        throw ExitMessage.make(
            "\(wanted) was not found in \(Int(scanTimeout)) s: wake the power meter (turn the cranks) and try again",
            status: 1)
    }
}
