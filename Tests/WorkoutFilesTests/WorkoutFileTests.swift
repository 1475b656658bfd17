import FIT
import Testing

@testable import StructuredWorkouts
@testable import WorkoutFiles

/// A `.zwo` with the traps real files have, each step's meaning taken from how Zwift rides it.
let trapsZWO = """
    <?xml version="1.0" encoding="UTF-8"?>\r
    <workout_file>\r
      <author>A &amp; B</author>\r
      <name>Traps</name>\r
      <sportType>bike</sportType>\r
      <workout>\r
        <Warmup Duration="600" PowerLow="0.25" PowerHigh="0.75" Cadence="-1"/>\r
        <SteadyState Duration="420.00003" PowerLow="0.88" PowerHigh="0.94" Cadence="90"/>\r
        <IntervalsT Repeat="2" OnDuration="60" OffDuration="30" PowerOnLow="1.2" PowerOnHigh="1.4" OffPower="0.5" Cadence="100" CadenceResting="85">\r
          <textevent timeoffset="75" message="Easy now"/>\r
          <textevent timeoffset="95" message="Second one"/>\r
        </IntervalsT>\r
        <FreeRide Duration="1200" ftptest="1"/>\r
        <MaxEffort Duration="20"/>\r
        <Cooldown Duration="480" PowerLow="0.75449997" PowerHigh="0.30449998"/>\r
      </workout>\r
    </workout_file>\r

    """

@Suite struct ZWOTests {
    @Test func theTrapsAreReadAsZwiftRidesThem() throws {
        let workout = try ZWOFile.read(Array(trapsZWO.utf8))
        #expect(workout.name == "Traps")
        #expect(workout.author == "A & B")
        #expect(workout.steps.count == 9)
        // PowerLow is where a warm-up starts; Cadence="-1" is none.
        #expect(workout.steps[0] == WorkoutStep(.warmup, .seconds(600), .ramp(from: .percent(25), to: .percent(75))))
        // PowerLow ≠ PowerHigh in a SteadyState is a range; 420.00003 s is 420 s.
        #expect(
            workout.steps[1]
                == WorkoutStep(.active, .seconds(420), .range(low: .percent(88), high: .percent(94)), cadence: 90...90))
        // IntervalsT: on ramps 120 → 140 %, off 50 %; its texts are timed from the start of the whole set: 75 s is
        // 15 s into the first rest, 95 s is 5 s into the second on.
        let on = WorkoutStep(.active, .seconds(60), .ramp(from: .percent(120), to: .percent(140)), cadence: 100...100)
        let off = WorkoutStep(.rest, .seconds(30), .steady(.percent(50)), cadence: 85...85)
        var firstOff = off
        firstOff.texts = [StepText(offsetSeconds: 15, "Easy now")]
        var secondOn = on
        secondOn.texts = [StepText(offsetSeconds: 5, "Second one")]
        #expect(Array(workout.steps[2...5]) == [on, firstOff, secondOn, off])
        #expect(workout.steps[6] == WorkoutStep(.active, .seconds(1200), .free, scored: true))
        #expect(workout.steps[7] == WorkoutStep(.active, .seconds(20), .maxEffort))
        // A cool-down's PowerLow is above its PowerHigh: it starts there. 0.75449997 is kept to 0.01 %.
        #expect(
            workout.steps[8]
                == WorkoutStep(
                    .cooldown, .seconds(480),
                    .ramp(from: PowerLevel(hundredths: 7545, .ftp), to: PowerLevel(hundredths: 3045, .ftp))))
    }

    @Test func writtenAndReadAgainIsTheSameSteps() throws {
        let workout = try ZWOFile.read(Array(trapsZWO.utf8))
        let again = try ZWOFile.read(try ZWOFile.write(workout))
        #expect(again == workout)
        // The repeated on/off pair went back into one IntervalsT.
        let text = String(decoding: try ZWOFile.write(workout), as: UTF8.self)
        #expect(text.contains("<IntervalsT Repeat=\"2\" OnDuration=\"60\" OffDuration=\"30\""))
        #expect(text.contains("PowerLow=\"0.7545\" PowerHigh=\"0.3045\""))
    }

    @Test func theBuiltInWorkoutsGoThroughZWOWithWhatTheFormatHolds() throws {
        for (id, workout) in BuiltInWorkouts.all where !id.hasPrefix("ramp") {
            let again = try ZWOFile.read(try ZWOFile.write(workout))
            // A .zwo has no word for a rest outside IntervalsT, no step names, no heart rate and no grade.
            var expected = workout
            expected.steps = workout.steps.map { step in
                var step = step
                if step.intensity == .rest { step.intensity = .active }
                step.name = nil
                step.gradeHundredths = nil
                if step.power == .maxEffort { step.cadence = nil }
                return step
            }
            var read = again
            read.steps = again.steps.map { step in
                var step = step
                if step.intensity == .rest { step.intensity = .active }
                return step
            }
            #expect(read == expected, "\(id)")
        }
    }

    @Test func watts_distances_and_open_steps_have_no_form_in_a_zwo() {
        let watts = StructuredWorkout(name: "W", steps: [WorkoutStep(.active, .seconds(60), .steady(.watts(200)))])
        #expect(throws: WorkoutReadError.self) { try ZWOFile.write(watts) }
        let open = StructuredWorkout(name: "O", steps: [WorkoutStep(.active, .open, .steady(.percent(50)))])
        #expect(throws: WorkoutReadError.self) { try ZWOFile.write(open) }
    }

    @Test func aBrokenFileIsRefusedWithItsLineAndWhy() {
        func refusal(_ text: String) -> String {
            do {
                _ = try ZWOFile.read(Array(text.utf8))
                return "read"
            } catch { return error.description }
        }
        #expect(
            refusal("<workout_file>\n<workout>\n<Sprint Duration=\"30\"/>\n</workout>\n</workout_file>")
                .hasPrefix("<Sprint> on line 3: is not a workout step cyclelog knows"))
        #expect(
            refusal("<workout_file>\n<workout>\n<SteadyState Duration=\"30\"/>\n</workout>\n</workout_file>")
                == "<SteadyState> on line 3: has neither Power nor PowerLow and PowerHigh")
        #expect(
            refusal("<workout_file>\n<workout>\n<SteadyState Duration=\"x\" Power=\"1\"/></workout></workout_file>")
                .hasPrefix("<SteadyState> on line 3: Duration=\"x\" is not a number"))
        #expect(
            refusal("<workout_file>\n<workout>\n</workout_file>")
                == "line 3: </workout_file> closes <workout> (opened on line 2)")
        #expect(
            refusal("<workout_file><sportType>run</sportType><workout/></workout_file>").contains(
                "a run workout, not a ride"))
        #expect(refusal("<workout_file><workout></workout></workout_file>").contains("has no steps"))
        #expect(
            refusal("<workout_file><name>&bogus;</name></workout_file>").hasPrefix("line 1: unknown entity &bogus;"))
        // Nested without end: bounded, not a crash.
        #expect(refusal(String(repeating: "<a>", count: 100_000)).contains("nested more than 64 deep"))
    }
}

@Suite struct ERGTests {
    @Test func pointsBecomeStepsAndRampsAndTheTextsFindTheirStep() throws {
        let erg = """
            [COURSE HEADER]\r
            VERSION = 2\r
            FTP = 260\r
            DESCRIPTION = Checkup\r
            MINUTES  WATTS\r
            [END COURSE HEADER]\r
            [COURSE DATA]\r
            0.0\t130\r
            2.0\t130\r
            2.0\t143\r
            2.0\t143\r
            4.5\t200\r
            4.5\tLAP\r
            5\t200\r
            [END COURSE DATA]\r
            [COURSE TEXT]\r
            130\tRamp up\t10\r
            [END COURSE TEXT]\r

            """
        let workout = try ERGFile.read(Array(erg.utf8), fileName: "x")
        #expect(workout.name == "Checkup")
        var ramp = WorkoutStep(.active, .seconds(150), .ramp(from: .watts(143), to: .watts(200)))
        ramp.texts = [StepText(offsetSeconds: 10, "Ramp up")]
        #expect(
            workout.steps == [
                WorkoutStep(.active, .seconds(120), .steady(.watts(130))), ramp,
                WorkoutStep(.active, .seconds(30), .steady(.watts(200))),
            ])
    }

    @Test func anMRCIsInSharesOfFTP() throws {
        let mrc =
            "[COURSE HEADER]\nMINUTES PERCENT\n[END COURSE HEADER]\n[COURSE DATA]\n0 50\n6.60 50\n6.60 100\n7.98 140\n[END COURSE DATA]\n"
        let workout = try ERGFile.read(Array(mrc.utf8), fileName: "folder/My ride.mrc")
        #expect(workout.name == "folder/My ride.mrc")
        #expect(
            workout.steps == [
                WorkoutStep(.active, .seconds(396), .steady(.percent(50))),
                WorkoutStep(.active, .seconds(83), .ramp(from: .percent(100), to: .percent(140))),
            ])
    }

    @Test func aFileWithoutItsUnitOrGoingBackInTimeIsRefused() {
        #expect(
            throws: WorkoutReadError(
                "the header", "has no 'MINUTES WATTS' or 'MINUTES PERCENT' line: the power's unit is unknown")
        ) {
            try ERGFile.read(Array("[COURSE DATA]\n0 100\n1 100\n".utf8), fileName: "x")
        }
        #expect(throws: WorkoutReadError("line 5", "goes back in time (1 minutes after 120 s)")) {
            try ERGFile.read(
                Array("[COURSE HEADER]\nMINUTES WATTS\n[COURSE DATA]\n2 100\n1 100\n".utf8), fileName: "x")
        }
    }
}

@Suite struct FITWorkoutTests {
    @Test func everyBuiltInWorkoutReadsBackAsFITHoldsIt() throws {
        for (id, workout) in BuiltInWorkouts.all {
            let bytes = FITWorkoutFile.write(workout, createdMicroseconds: 1_700_000_000_000_000)
            #expect(try FITWorkoutFile.read(bytes) == FITWorkoutFile.asWritten(workout), "\(id)")
        }
    }

    @Test func customPowerUpTo1000IsAShareOfFTPAndAboveItWattsPlus1000() throws {
        let workout = StructuredWorkout(
            name: "Units",
            steps: [
                WorkoutStep(.warmup, .seconds(600), .range(low: .percent(55), high: .percent(75))),
                WorkoutStep(.active, .meters(5000), .steady(.watts(250)), cadence: 85...95),
                WorkoutStep(.rest, .open, .free, name: "Until lap"),
            ])
        let bytes = FITWorkoutFile.write(workout, createdMicroseconds: 0)
        let steps = try FITDecoder.messages(bytes).filter { $0.global == 27 }
        #expect(steps.map { $0.integers[5] } == [55, 1250, nil])
        #expect(steps.map { $0.integers[6] } == [75, 1250, nil])
        // time in ms, distance in cm, open
        #expect(steps.map { $0.integers[1] } == [0, 1, 5])
        #expect(steps.map { $0.integers[2] } == [600_000, 500_000, nil])
        #expect(steps.map { $0.integers[21] } == [nil, 85, nil])
        #expect(try FITWorkoutFile.read(bytes) == workout)
    }

    @Test func anActivityOrADamagedFileIsRefusedByItsByte() {
        var encoder = FITEncoder()
        encoder.define(local: 0, global: 0, fields: [.init(0, .enumeration)])
        encoder.write(local: 0, [.number(4)])
        // The data message follows the 14-byte header and the 9-byte definition (1 + 5 + 3).
        #expect(throws: WorkoutReadError("byte 23", "the FIT file is of type 4 (an activity), not a workout (5)")) {
            try FITWorkoutFile.read(encoder.file())
        }
        let cut = Array(FITWorkoutFile.write(BuiltInWorkouts.sweetSpot, createdMicroseconds: 0).dropLast(10))
        #expect(throws: WorkoutReadError.self) { try FITWorkoutFile.read(cut) }
    }
}
