import ArgumentParser
import BlueZ
import CyclingSensors
import ExitStatus
import Foundation
import LiveRecording
import ProgramMain
import Recording
import SensorSetup
import WorkoutStore
import Workouts

/// `cyclelog calibrate SENSOR`: zero offset through the power meter's control point, and its crank length.
struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Zeroes a power meter and sets or reads its crank length; spins a smart trainer down (--trainer).",
        discussion: """
            Unclip and keep the cranks still first (most meters want the measuring crank arm straight down). \
            Uses Start Enhanced Offset Compensation when the meter's features say it has it, else Start Offset \
            Compensation. The answer is explained, stored, and shown with the next workout and in `cyclelog \
            sensors`. With --crank-length the length is sent, read back and remembered; --skip-zero leaves the \
            offset alone. With --trainer the sensor is a smart trainer and it is spun down (FTMS Spin Down \
            Control): pedal up to the speed shown, stop pedalling when told, let the flywheel coast.
            """)

    @Argument(help: "The power meter's (or with --trainer the trainer's) address or name.")
    var sensor: String

    @Flag(help: "The sensor is a smart trainer: run its spin-down calibration.")
    var trainer = false

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
        if trainer && (crankLength != nil || readCrankLength || skipZero) {
            throw ValidationError("--trainer spins a trainer down; the crank length and the zero are a power meter's")
        }
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
            throw CommandFailure(error.description)
        }
        if trainer {
            let succeeded: Result<Bool, any Error>
            do {
                succeeded = .success(
                    try await TrainerCalibration().run(bluez, device: device, name: name, store: store) { words in
                        sayOnStandardOutput("\(name): \(words)")
                    })
            } catch {
                succeeded = .failure(error)
            }
            try? await bluez.disconnect(device.path)
            if try !succeeded.get() { throw ExitStatus.failed.saidAlready }
            return
        }
        var calibration = MeterCalibration()
        calibration.zeroOffset = !skipZero
        calibration.crankLengthMillimetres = crankLength
        calibration.readCrankLength = readCrankLength
        let outcome: Result<Bool, any Error>
        do {
            outcome = .success(
                try await calibration.run(bluez, device: device, name: name, store: store) { report in
                    present(report, name)
                })
        } catch {
            outcome = .failure(error)
        }
        // Let go of the meter before leaving: BlueZ keeps a link a client made after the client is gone.
        try? await bluez.disconnect(device.path)
        if try !outcome.get() { throw ExitStatus.failed.saidAlready }
    }

    private func present(_ report: MeterCalibration.Report, _ name: String) {
        switch report {
        case .note(let note):
            if !json { sayOnStandardOutput("\(name): \(note)") }
        case .answer(let calibration):
            sayOnStandardOutput(
                json ? CalibrationText.object(calibration).rendered() : "\(name): \(calibration.explanation)")
        case .keptOtherLength(let kept, let sent):
            printError(
                "cyclelog: \(name) kept \(kept.map(CalibrationText.millimetres) ?? "-"), "
                    + "not \(CalibrationText.millimetres(sent))")
        }
    }

    /// The meter among BlueZ's devices, scanning for it first when BlueZ does not know it.
    private func findDevice(_ bluez: BlueZClient, wanted: String) async throws -> BluetoothDevice {
        let search = try await SensorSearch.open(bluez, adapterName: buses.adapter)
        if let found = await search.find(
            wanted, within: .seconds(scanTimeout),
            services: [(trainer ? CyclingService.fitnessMachine : .cyclingPower).rawValue])
        {
            return found
        }
        throw CommandFailure(
            "\(wanted) was not found in \(Int(scanTimeout)) s: wake the "
                + (trainer ? "trainer (turn the pedals)" : "power meter (turn the cranks)") + " and try again")
    }
}
