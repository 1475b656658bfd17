import Foundation
import RecorderInterface
import TestSupport
import TrainerControl
import WorkoutStore
import Workouts
import XCTest

/// Steering the stand-in's smart trainer through the recorder over a private D-Bus: `record --control erg`, the
/// CLI's verbs, what is written to the trainer's control point and what the trainer does, what it refuses, and
/// the Reset at the end (FTMS's control point).
final class TrainerCommandTests: XCTestCase {
    private func recording(_ standIn: StandIn, _ arguments: [String], sensors: [String] = ["KICKR"]) async throws
        -> (Cyclelog, String)
    {
        let database = standIn.bus.folder.appendingPathComponent("trainer.sqlite").path
        let record = try Cyclelog(
            ["record", "--plain", "--db", database] + sensors.flatMap { ["--sensor", $0] } + arguments,
            standIn: standIn)
        try await waitFor("the recorder on the bus", record) {
            try await standIn.busNameOwner(RecorderControl.busName) != nil
        }
        try await waitFor("the trainer streaming", record) { try standIn.sent().count >= 2 }
        return (record, database)
    }

    func testErgFromTheStartThenTargetsFromTheCommandLineAndResetAtTheEnd() async throws {
        let standIn = try StandIn(sensors: [StandIn.trainer()])
        try await standIn.waitUntilReady()
        let (record, database) = try await recording(standIn, ["--control", "erg", "--target-watts", "200"])
        // Request Control, then 200 W (05 C8 00), within a second of the subscription.
        try await waitFor("control and the target written", record) { try standIn.writes().count >= 2 }
        XCTAssertEqual(try standIn.writes().prefix(2), [[0x00], [0x05, 0xC8, 0x00]])

        let up = try Cyclelog(["target", "+10"], standIn: standIn)
        XCTAssertEqual(up.wait(seconds: 20), 0, up.output)
        XCTAssertTrue(up.output.contains("Trainer: ERG at 210 W"), up.output)
        try await waitFor("210 W written", record) { try standIn.writes().contains([0x05, 0xD2, 0x00]) }
        let down = try Cyclelog(["target", "-20"], standIn: standIn)
        XCTAssertEqual(down.wait(seconds: 20), 0, down.output)
        try await waitFor("190 W written", record) { try standIn.writes().contains([0x05, 0xBE, 0x00]) }
        // Beyond the trainer's declared 0–1500 W: held at 1500 W, never sent above it.
        let far = try Cyclelog(["target", "2500"], standIn: standIn)
        XCTAssertEqual(far.wait(seconds: 20), 0, far.output)
        try await waitFor("1500 W written", record) {
            try standIn.writes().contains([0x05, 0xDC, 0x05])
        }
        XCTAssertFalse(
            try standIn.writes().contains {
                $0.first == 0x05 && Int16(bitPattern: UInt16($0[1]) | UInt16($0[2]) << 8) > 1500
            })

        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)
        XCTAssertEqual(try standIn.writes().last, [0x01], "the trainer is let go (Reset) before the recorder exits")
        // The journal holds every request and every answer.
        let store = try WorkoutStore(path: database)
        let journal = try store.journal(try XCTUnwrap(store.list().first?.id))
        let written = journal.compactMap { if case .write(_, 0x2AD9, let value) = $0.kind { value } else { nil } }
        let answers = journal.compactMap {
            if case .notification(_, 0x2AD9, let value) = $0.kind { value } else { nil }
        }
        XCTAssertEqual(written.first, [0x00])
        XCTAssertEqual(written.last, [0x01])
        XCTAssertEqual(answers.first, [0x80, 0x00, 0x01])
        XCTAssertTrue(answers.allSatisfy { $0.count == 3 && $0[0] == 0x80 && $0[2] == 0x01 }, "\(answers)")
        // The rider's targets, in order, and the ride's time in ERG.
        let asked = journal.compactMap {
            if case .setting(.trainerTarget(let target)) = $0.kind { target } else { nil }
        }
        XCTAssertEqual(asked, [.erg(watts: 200), .erg(watts: 210), .erg(watts: 190), .erg(watts: 2500)])
        let show = try Cyclelog(["show", "last", "--json", "--db", database], standIn: standIn)
        XCTAssertEqual(show.wait(seconds: 20), 0, show.output)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(show.output.utf8)) as? [String: Any])
        let trainer = try XCTUnwrap(summary["trainer"] as? [String: Any], show.output)
        let seconds = try XCTUnwrap(trainer["secondsByMode"] as? [String: Int])
        XCTAssertGreaterThan(seconds["erg"] ?? 0, 0, show.output)
        XCTAssertEqual(seconds["sim"], 0)
        XCTAssertNotNil(trainer["ergMeanAbsoluteDifferenceWatts"] as? Double, show.output)
    }

    func testAResistanceOnlyTrainerAskedForErgSaysWhyInWords() async throws {
        let standIn = try StandIn(sensors: [StandIn.trainer(["targets": ["resistance"]])])
        try await standIn.waitUntilReady()
        let (record, _) = try await recording(standIn, [])
        try await waitFor("the trainer connected", record) {
            try await self.trainerState(standIn) == "free"
        }
        let erg = try Cyclelog(["target", "250"], standIn: standIn)
        XCTAssertEqual(erg.wait(seconds: 20), 1, erg.output)
        XCTAssertTrue(
            erg.output.contains("the trainer does not take ERG (its features do not list it; it takes resistance)"),
            erg.output)
        XCTAssertFalse(try standIn.writes().contains { $0.first == 0x05 })
        let resistance = try Cyclelog(["resistance", "30"], standIn: standIn)
        XCTAssertEqual(resistance.wait(seconds: 20), 0, resistance.output)
        // 30 % of the declared 0–20.0: level 6.0, 60 tenths.
        try await waitFor("the level written", record) { try standIn.writes().contains([0x04, 60]) }
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)
    }

    func testControlNotPermittedIsShownOnTheStatusAndTheCommandLine() async throws {
        let standIn = try StandIn(sensors: [StandIn.trainer(["refuse": ["00": 5]])])
        try await standIn.waitUntilReady()
        let (record, _) = try await recording(standIn, ["--control", "erg"])
        try await waitFor("the refusal on the status", record, seconds: 30) {
            try await self.trainerState(standIn) == "refused"
        }
        let status = try Cyclelog(["status", "--json"], standIn: standIn)
        XCTAssertEqual(status.wait(seconds: 20), 0, status.output)
        XCTAssertTrue(
            status.output.contains(
                "the trainer refused control: another app holds it — close Zwift or the trainer's own app"),
            status.output)
        // Request Control sent four times (once and three retries), nothing else.
        XCTAssertEqual(try standIn.writes(), [[0x00], [0x00], [0x00], [0x00]])
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)
        XCTAssertTrue(record.output.contains("the trainer refused control"), record.output)
    }

    func testPowerMatchSteersByTheMeterWhenTheTrainerReadsHigh() async throws {
        let standIn = try StandIn(sensors: [StandIn.trainer(["readsHigh": 1.04]), StandIn.meterOnTheTrainer])
        try await standIn.waitUntilReady()
        let (record, _) = try await recording(
            standIn,
            ["--control", "erg", "--target-watts", "250", "--power-from", "meter", "--power-match-seconds", "4"],
            sensors: ["KICKR", "Stages Power L"])
        // The offset settles toward meter − trainer ≈ −10 W (250 / 1.04 − 260 at the end): the trainer is told more
        // than 250 W, so that the meter reads 250 W.
        try await waitFor("the power match's offset", record, seconds: 60) {
            guard let offset = try await self.recorderStatus(standIn).powerMatchOffsetWatts else { return false }
            return offset < -8
        }
        let targets = try standIn.writes().filter { $0.first == 0x05 }.map {
            Int(Int16(bitPattern: UInt16($0[1]) | UInt16($0[2]) << 8))
        }
        XCTAssertEqual(targets.first, 250)
        XCTAssertGreaterThan(targets.last ?? 0, 255, "\(targets)")
        XCTAssertLessThanOrEqual(targets.last ?? 0, 261, "\(targets)")
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)
    }

    func testACadenceDropEasesErgAndItComesBackOverFiveSeconds() async throws {
        let trainer = "F1:22:33:44:55:66"
        let standIn = try StandIn(
            sensors: [StandIn.trainer()],
            events: [
                ["at": 2, "sensor": trainer, "do": "cadence", "rpm": 30],
                ["at": 8, "sensor": trainer, "do": "cadence", "rpm": 85],
            ])
        try await standIn.waitUntilReady()
        let (record, _) = try await recording(standIn, ["--control", "erg", "--target-watts", "250"])
        // 3 s under 40 rpm: the lower of 125 W (50 %) and 100 W.
        try await waitFor("the recovery level", record, seconds: 30) {
            try standIn.writes().contains([0x05, 0x64, 0x00])
        }
        XCTAssertTrue(record.output.contains("cadence under 40 rpm for 3 s: ERG eased to 100 W"), record.output)
        // Back above 60 rpm: 250 W again, reached through steps in between (over 5 s), not in one.
        try await waitFor("the target again", record, seconds: 30) {
            try standIn.writes().filter { $0.first == 0x05 }.last == [0x05, 0xFA, 0x00]
        }
        let watts = try standIn.writes().filter { $0.first == 0x05 }.map {
            Int(Int16(bitPattern: UInt16($0[1]) | UInt16($0[2]) << 8))
        }
        let back = Array(watts.drop { $0 != 100 }.dropFirst())
        XCTAssertGreaterThanOrEqual(back.count, 3, "\(watts)")
        XCTAssertEqual(back, back.sorted(), "\(watts)")
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)
    }

    func testATrainerThatDropsMidIntervalGetsItsTargetBack() async throws {
        let trainer = "F1:22:33:44:55:66"
        let standIn = try StandIn(
            sensors: [StandIn.trainer()], events: [["at": 3, "sensor": trainer, "do": "drop", "seconds": 2]])
        try await standIn.waitUntilReady()
        let (record, _) = try await recording(standIn, ["--control", "erg", "--target-watts", "230"])
        // Control and 230 W, then after the link is back, control and 230 W again without anyone asking.
        try await waitFor("the target sent again after the reconnection", record, seconds: 40) {
            try standIn.writes().filter { $0 == [0x05, 0xE6, 0x00] }.count >= 2
        }
        XCTAssertEqual(try standIn.writes().filter { $0 == [0x00] }.count, 2)
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 30), 0, record.output)
    }

    func testSpinDownTellsTheRiderWhatToDoAndLetsTheTrainerGo() async throws {
        let standIn = try StandIn(sensors: [StandIn.trainer(["targets": ["power", "spindown"]])])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("spindown.sqlite").path
        let calibrate = try Cyclelog(["calibrate", "KICKR", "--trainer", "--db", database], standIn: standIn)
        XCTAssertEqual(calibrate.wait(seconds: 60), 0, calibrate.output)
        // The trainer's answer 80 13 01 D0 07 B8 0B: between 20.0 and 30.0 km/h (0.01 km/h units).
        XCTAssertTrue(calibrate.output.contains("KICKR: pedal up to above 30.0 km/h"), calibrate.output)
        XCTAssertTrue(calibrate.output.contains("through 20.0 km/h"), calibrate.output)
        XCTAssertTrue(calibrate.output.contains("KICKR: stop pedalling now"), calibrate.output)
        XCTAssertTrue(calibrate.output.contains("KICKR: spin down done: the trainer is calibrated"), calibrate.output)
        // Request Control, Spin Down Control (start), then Reset.
        XCTAssertEqual(try standIn.writes(), [[0x00], [0x13, 0x01], [0x01]])
        let stored = try WorkoutStore(path: database).calibrations()
        XCTAssertEqual(stored.map(\.operation), ["spinDown"])
        XCTAssertEqual(stored.map(\.succeeded), [true])
        XCTAssertEqual(stored.first?.response, [0x14, 0x02])
    }

    func testSpinDownThatFailsOrIsNotOfferedIsSaid() async throws {
        let failing = try StandIn(sensors: [StandIn.trainer(["targets": ["power", "spindown"], "spinDownResult": 3])])
        try await failing.waitUntilReady()
        let calibrate = try Cyclelog(
            ["calibrate", "KICKR", "--trainer", "--db", failing.bus.folder.appendingPathComponent("a.sqlite").path],
            standIn: failing)
        XCTAssertEqual(calibrate.wait(seconds: 60), 1, calibrate.output)
        XCTAssertTrue(calibrate.output.contains("the spin down failed (the trainer said error)"), calibrate.output)
        XCTAssertEqual(try failing.writes().last, [0x01])

        let without = try StandIn(sensors: [StandIn.trainer(["targets": ["power"]])])
        try await without.waitUntilReady()
        let refused = try Cyclelog(
            ["calibrate", "KICKR", "--trainer", "--db", without.bus.folder.appendingPathComponent("b.sqlite").path],
            standIn: without)
        XCTAssertEqual(refused.wait(seconds: 60), 1, refused.output)
        XCTAssertTrue(refused.output.contains("does not spin down over Bluetooth"), refused.output)
        XCTAssertEqual(try without.writes(), [])
    }

    // MARK: Reading the recorder

    private func recorderStatus(_ standIn: StandIn) async throws -> RecorderStatus {
        let command = try Cyclelog(["status", "--json"], standIn: standIn)
        guard command.wait(seconds: 20) == 0,
            let object = try JSONSerialization.jsonObject(with: Data(command.output.utf8)) as? [String: Any]
        else { return RecorderStatus() }
        var status = RecorderStatus()
        status.trainerState = (object["TrainerState"] as? String).flatMap(TrainerState.init(rawValue:))
        status.powerMatchOffsetWatts = object["PowerMatchOffsetWatts"] as? Double
        status.trainerMessage = object["TrainerMessage"] as? String ?? ""
        return status
    }

    /// The trainer's state as `status --json` says it ("" with none).
    private func trainerState(_ standIn: StandIn) async throws -> String {
        try await recorderStatus(standIn).trainerState?.rawValue ?? ""
    }
}
