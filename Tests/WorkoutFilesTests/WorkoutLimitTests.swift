import Testing

@testable import StructuredWorkouts
@testable import WorkoutFiles

/// Hostile workout files: every bound (file size, steps, texts) holds at every way in, before the work, with the
/// reason in words; and what cyclelog writes is what the format allows.
@Suite struct WorkoutLimitTests {
    static func steps(_ count: Int) -> [WorkoutStep] {
        Array(repeating: WorkoutStep(.active, .seconds(60), .steady(.percent(80))), count: count)
    }

    static func refusal(_ read: () throws(WorkoutReadError) -> StructuredWorkout) -> String {
        do {
            _ = try read()
            return "read"
        } catch { return error.description }
    }

    @Test func aFITWorkoutOf10001PlainStepsIsRefused() {
        // Written as a FIT workout by our writer (which writes what it is given), read back: refused before a
        // step is read, where only its repeats were counted before.
        let file = FITWorkoutFile.write(
            StructuredWorkout(name: "Too long", steps: Self.steps(10_001)), createdMicroseconds: 0)
        #expect(
            Self.refusal { () throws(WorkoutReadError) in try FITWorkoutFile.read(file) }
                == "the file: more than 10000 steps: a workout has at most 10000")
        // 10 000 is the bound, and is read.
        let most = FITWorkoutFile.write(
            StructuredWorkout(name: "Long", steps: Self.steps(10_000)), createdMicroseconds: 0)
        #expect(Self.refusal { () throws(WorkoutReadError) in try FITWorkoutFile.read(most) } == "read")
    }

    @Test func aFileOverFourMegabytesIsRefusedBeforeItIsRead() {
        // Not a workout at all past its first bytes: only the size is looked at.
        let big = Array("<workout_file><description>".utf8) + Array(repeating: UInt8(ascii: "x"), count: 5_000_000)
        for format in WorkoutFormat.allCases {
            #expect(
                Self.refusal { () throws(WorkoutReadError) in try format.read(big, fileName: "big.\(format)") }
                    == "the file: is 5.0 MB; a workout file is at most 4.0 MB")
        }
    }

    @Test func aDescriptionOrNameBeyondItsBoundIsRefused() {
        let description = String(repeating: "a", count: 3_000_000)
        let zwo =
            "<workout_file><name>Long</name><description>\(description)</description><workout>"
            + "<SteadyState Duration=\"60\" Power=\"0.8\"/></workout></workout_file>"
        #expect(
            Self.refusal { () throws(WorkoutReadError) in try ZWOFile.read(Array(zwo.utf8)) }
                == "line 1: the text of <description> is longer than any text of a workout may be (10.0 KB)")
        let erg =
            "[COURSE HEADER]\nDESCRIPTION = \(String(repeating: "n", count: 600))\nMINUTES WATTS\n"
            + "[END COURSE HEADER]\n[COURSE DATA]\n0\t100\n10\t100\n[END COURSE DATA]\n"
        #expect(
            Self.refusal { () throws(WorkoutReadError) in try ERGFile.read(Array(erg.utf8), fileName: "a.erg") }
                == "the workout: its name is 600 bytes; a workout's name is at most 500 bytes")
    }

    @Test func theCanonicalTextHoldsTheSameBounds() {
        // What the library's rows and a journal's workout line are read from.
        var workout = StructuredWorkout(name: "Chatty", steps: Self.steps(1))
        workout.steps[0].texts = (0..<101).map { StepText(offsetSeconds: $0, "go") }
        #expect(
            Self.refusal { () throws(WorkoutReadError) in try WorkoutText.parse(WorkoutText.text(workout)) }
                == "step 1: more than 100 messages")
        // A level of nineteen digits is refused, not multiplied into an overflow (found by the fuzzer).
        let huge = WorkoutText.header + "\nname x\nstep active 60s 92233720368547758%\n"
        #expect(
            Self.refusal { () throws(WorkoutReadError) in try WorkoutText.parse(huge) }.hasPrefix(
                "line 3: a step's power is"))
        let long = WorkoutText.header + "\nname x\ndescription " + String(repeating: "d", count: 4_000_001) + "\n"
        #expect(
            Self.refusal { () throws(WorkoutReadError) in try WorkoutText.parse(long) }
                == "the workout: its text is 4.0 MB; a workout's is at most 4.0 MB")
    }

    @Test func aDoctypeIsRefusedSayingSo() {
        let expansion = """
            <?xml version="1.0"?>
            <!DOCTYPE lol [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>
            <workout_file><name>&lol2;</name></workout_file>
            """
        let external = """
            <!DOCTYPE workout_file [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
            <workout_file><name>&secret;</name></workout_file>
            """
        for file in [expansion, external, "<!DOCTYPE workout_file>\n<workout_file/>"] {
            #expect(
                Self.refusal { () throws(WorkoutReadError) in try ZWOFile.read(Array(file.utf8)) }.contains(
                    "a DOCTYPE or an entity declaration is not accepted in a workout file"))
        }
    }

    /// XML 1.0 §2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
    static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    @Test func aWarmUpWithARangeIsWrittenAsASteadyStateAndSaidSo() throws {
        let workout = StructuredWorkout(
            name: "Easy start",
            steps: [WorkoutStep(.warmup, .seconds(300), .range(low: .percent(50), high: .percent(60)))])
        let back = try ZWOFile.read(try ZWOFile.write(workout))
        #expect(back.steps.map(\.power) == [.range(low: .percent(50), high: .percent(60))])
        #expect(
            ZWOFile.losses(workout) == [
                "the intensity of warm-ups and cool-downs with a range, written as SteadyStates (1 step)"
            ])
    }

    @Test func aZWOIsWrittenWithOnlyWhatXMLAllows() throws {
        // An .mrc titled `bad\x01desc`, a coach's event name with an escape sequence and a U+FFFF.
        var workout = StructuredWorkout(
            name: "bad\u{01}desc", author: "a\u{1B}[31m", description: "tab\there\u{FFFF}\u{0B}", steps: Self.steps(1))
        workout.steps[0].texts = [StepText(offsetSeconds: 0, "go\u{08}go")]
        let text = String(decoding: try ZWOFile.write(workout), as: UTF8.self)
        #expect(text.unicodeScalars.allSatisfy(Self.isXMLCharacter))
        // Nor as a character reference (&#1; is not well-formed XML 1.0 either).
        #expect(!text.contains("&#1;") && !text.contains("&#x1;"))
        let back = try ZWOFile.read(Array(text.utf8))
        #expect(back.name == "baddesc")
        #expect(back.description == "tab\there")
        #expect(back == ZWOFile.asWritten(workout))
        // A line feed written as `&#10;` then a combining mark: read back by byte, not hidden in one character
        // (found by the fuzzer).
        var marked = workout
        marked.description = "a\n\u{5BC}adence"
        #expect(try ZWOFile.read(try ZWOFile.write(marked)).description == "a\n\u{5BC}adence")
    }
}
