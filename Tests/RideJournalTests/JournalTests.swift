import StructuredWorkouts
import TestSupport
import Workouts
import XCTest

@testable import Capture
@testable import RideJournal

final class JournalTests: XCTestCase {
    let events: [RideEvent] = [
        RideEvent(
            timeMicroseconds: 1_714_550_398_000_000, .connected(sensor: "C0:11:22:33:44:55", name: "Stages  Power\\L")),
        RideEvent(
            timeMicroseconds: 1_714_550_398_100_000,
            .read(sensor: "C0:11:22:33:44:55", characteristic: 0x2A19, value: [0x5F])),
        RideEvent(
            timeMicroseconds: 1_714_550_398_200_000, .wheelCircumference(sensor: "C0:11:22:33:44:55", millimetres: 2096)
        ),
        RideEvent(timeMicroseconds: 1_714_550_398_300_000, .setting(.defaultWheelCircumference(millimetres: 2000))),
        RideEvent(
            timeMicroseconds: 1_714_550_398_400_000,
            .setting(.autoPause(AutoPause(belowSpeedMetersPerSecond: 1.5, afterSeconds: 10)))),
        RideEvent(
            timeMicroseconds: 1_714_550_400_000_000,
            .control(
                .start(
                    WorkoutPlan(
                        name: "Tuesday\nintervals", goal: .timeSeconds(2700), location: .indoor,
                        syncIdentifier: "6f1c2d3e-0000-4000-8000-000000000001")))),
        RideEvent(
            timeMicroseconds: 1_714_550_400_510_000,
            .notification(
                sensor: "C0:11:22:33:44:55", characteristic: 0x2A63, value: [0x20, 0, 0xFA, 0, 0x2A, 0, 0, 0x40])),
        // A trainer asked for 200 W (Set Target Power) and its answer, Success (FTMS's control point).
        RideEvent(
            timeMicroseconds: 1_714_550_400_600_000,
            .write(sensor: "F1:22:33:44:55:66", characteristic: 0x2AD9, value: [0x05, 0xC8, 0x00])),
        RideEvent(
            timeMicroseconds: 1_714_550_400_650_000,
            .notification(sensor: "F1:22:33:44:55:66", characteristic: 0x2AD9, value: [0x80, 0x05, 0x01])),
        RideEvent(timeMicroseconds: 1_714_550_400_700_000, .setting(.trainerTarget(.erg(watts: 250)))),
        RideEvent(
            timeMicroseconds: 1_714_550_400_710_000, .setting(.trainerTarget(.simulation(gradeHundredthsPercent: -205)))
        ),
        RideEvent(timeMicroseconds: 1_714_550_400_720_000, .setting(.trainerTarget(.resistance(percent: 30)))),
        RideEvent(timeMicroseconds: 1_714_550_400_730_000, .setting(.trainerTarget(.free))),
        RideEvent(timeMicroseconds: 1_714_550_401_000_000, .control(.pause)),
        RideEvent(timeMicroseconds: 1_714_550_402_000_000, .control(.resume)),
        RideEvent(timeMicroseconds: 1_714_550_403_000_000, .control(.lap)),
        RideEvent(timeMicroseconds: 1_714_550_403_500_000, .control(.marker("top of the climb"))),
        RideEvent(
            timeMicroseconds: 1_714_550_403_600_000, .control(.intake(Intake(.water, amount: 354.9, unit: "ml")!))),
        RideEvent(timeMicroseconds: 1_714_550_403_700_000, .control(.intake(Intake(.carbs, amount: 30, unit: "g")!))),
        RideEvent(timeMicroseconds: 1_714_550_404_000_000, .disconnected(sensor: "C0:11:22:33:44:55")),
        RideEvent(timeMicroseconds: 1_714_550_405_000_000, .control(.end)),
        RideEvent(timeMicroseconds: 1_714_550_406_000_000, .control(.cancel)),
        RideEvent(
            timeMicroseconds: 1_714_550_407_000_000,
            .notification(sensor: "E8:33:44:55:66:77", characteristic: 0x2A37, value: [])),
        // An app on the sensor hub asked for 250 W and the hub answered Success (FTMS 4.16.2).
        RideEvent(
            timeMicroseconds: 1_714_550_408_000_000,
            .hub(.written(app: "00:AA:02:00:00:06", characteristic: 0x2AD9, value: [0x05, 0xFA, 0x00]))),
        RideEvent(
            timeMicroseconds: 1_714_550_408_000_001, .hub(.sent(characteristic: 0x2AD9, value: [0x80, 0x05, 0x01]))),
        // It holds the trainer (named as BlueZ read it, a space in its name), then the rider takes it back.
        RideEvent(
            timeMicroseconds: 1_714_550_408_000_002, .hub(.holder(app: "00:AA:02:00:00:06", name: "Zwift Play"))),
        RideEvent(timeMicroseconds: 1_714_550_409_000_000, .hub(.holder(app: nil, name: nil))),
    ]

    func testEveryEventKindRoundTripsThroughText() {
        let text = Journal.text(events)
        let read = Journal.read(text)
        XCTAssertEqual(read.problems, [])
        XCTAssertEqual(read.events, events)
        XCTAssertEqual(Journal.text(read.events), text)
    }

    func testTheLinesAreTheDocumentedGrammar() {
        let lines = Journal.text(Array(events[3...7])).split(separator: "\n")
        XCTAssertEqual(
            lines,
            [
                "# cyclelog journal 1",
                "2024-05-01T07:59:58.300000Z wheel * 2000",
                "2024-05-01T07:59:58.400000Z auto-pause below=1.5 after=10",
                "2024-05-01T08:00:00.000000Z start goal=2700s indoor sync=6f1c2d3e-0000-4000-8000-000000000001 name=Tuesday\\nintervals",
                "2024-05-01T08:00:00.510000Z notify C0:11:22:33:44:55 2a63 2000fa002a000040",
                "2024-05-01T08:00:00.600000Z write F1:22:33:44:55:66 2ad9 05c800",
            ])
        let trainer = Journal.text(Array(events[9...12])).split(separator: "\n").dropFirst()
        XCTAssertEqual(
            Array(trainer),
            [
                "2024-05-01T08:00:00.700000Z trainer erg 250", "2024-05-01T08:00:00.710000Z trainer sim -2.05",
                "2024-05-01T08:00:00.720000Z trainer resistance 30", "2024-05-01T08:00:00.730000Z trainer free",
            ])
        let hub = Journal.text(Array(events.suffix(4))).split(separator: "\n").dropFirst()
        XCTAssertEqual(
            Array(hub),
            [
                "2024-05-01T08:00:08.000000Z hub-write 00:AA:02:00:00:06 2ad9 05fa00",
                "2024-05-01T08:00:08.000001Z hub-send 2ad9 800501",
                "2024-05-01T08:00:08.000002Z hub-holder 00:AA:02:00:00:06 Zwift Play",
                "2024-05-01T08:00:09.000000Z hub-holder rider",
            ])
        for bad in ["hub-write 00:AA:02:00:00:06 2ad9 5x", "hub-send 2ad9 zz", "hub-send", "hub-write", "hub-holder"] {
            XCTAssertFalse(Journal.read("2024-05-01T08:00:00.700000Z \(bad)\n").problems.isEmpty, bad)
        }
        for bad in ["trainer erg 3001", "trainer sim 41", "trainer resistance -1", "trainer free 3", "trainer warp 9"] {
            XCTAssertFalse(Journal.read("2024-05-01T08:00:00.700000Z \(bad)\n").problems.isEmpty, bad)
        }
    }

    /// A structured workout's line carries the whole workout (its text escaped onto one line) and the FTP; the
    /// player's controls are words; both go through the text and the compact stored form unchanged.
    func testAWorkoutAndItsPlayerControlsAreLinesOfTheirOwn() throws {
        let workout = StructuredWorkout(
            name: "Two\nlines \\ slash", description: "A\u{2028}B",
            steps: [
                WorkoutStep(.warmup, .seconds(600), .ramp(from: .percent(45), to: .percent(75)), name: "Warm-up"),
                WorkoutStep(.active, .open, .steady(.watts(250)), texts: [StepText(offsetSeconds: 5, "Go\r")]),
            ])
        let events = [
            RideEvent(
                timeMicroseconds: 1_714_550_400_000_000, .setting(.workout(PlannedWorkout(workout, ftpWatts: 250)))),
            RideEvent(
                timeMicroseconds: 1_714_550_401_000_000, .setting(.workout(PlannedWorkout(workout, ftpWatts: nil)))),
            RideEvent(timeMicroseconds: 1_714_550_402_000_000, .setting(.player(.skip))),
            RideEvent(timeMicroseconds: 1_714_550_403_000_000, .setting(.player(.extend(seconds: 60)))),
            RideEvent(timeMicroseconds: 1_714_550_404_000_000, .setting(.player(.intensity(percent: 95)))),
            RideEvent(timeMicroseconds: 1_714_550_405_000_000, .setting(.player(.back))),
        ]
        let text = Journal.text(events)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 7, "one line each")
        XCTAssertTrue(
            lines[1].hasPrefix("2024-05-01T08:00:00.000000Z workout ftp=250 # cyclelog workout 1\\nname Two\\\\nlines"),
            String(lines[1]))
        XCTAssertTrue(lines[2].contains(" workout ftp=none "))
        XCTAssertEqual(
            lines[3...].map(String.init),
            [
                "2024-05-01T08:00:02.000000Z player skip", "2024-05-01T08:00:03.000000Z player extend 60",
                "2024-05-01T08:00:04.000000Z player intensity 95", "2024-05-01T08:00:05.000000Z player back",
            ])
        let read = Journal.read(text)
        XCTAssertEqual(read.problems, [])
        XCTAssertEqual(read.events, events)
        XCTAssertEqual(try CompactJournal.decode(CompactJournal.encode(events)), events)
        for bad in [
            "player jump", "player extend 0", "player intensity 151", "workout ftp=0 x", "workout ftp=250 name x",
        ] {
            XCTAssertFalse(Journal.read("2024-05-01T08:00:00.700000Z \(bad)\n").problems.isEmpty, bad)
        }
    }

    /// A ride started from a preset and the water and carbohydrate logged during it, as the README documents.
    func testPresetsAndIntakeAreTheDocumentedWords() throws {
        var plan = WorkoutPlan(name: "Long", goal: .timeSeconds(3600))
        plan.preset = "endurance-1h"
        XCTAssertEqual(
            Journal.line(RideEvent(timeMicroseconds: 1_714_550_400_000_000, .control(.start(plan)))),
            "2024-05-01T08:00:00.000000Z start preset=endurance-1h goal=3600s name=Long")
        let water = try Journal.event("2024-05-01T08:12:00.000000Z intake water 250ml")
        XCTAssertEqual(water.kind, .control(.intake(try XCTUnwrap(Intake(.water, amount: 0.25, unit: "l")))))
        let carbs = try Journal.event("2024-05-01T08:12:00.000000Z intake carbs 30g")
        XCTAssertEqual(carbs.kind, .control(.intake(try XCTUnwrap(Intake(.carbs, amount: 30, unit: "g")))))
        // The journal keeps one unit per kind; other spellings, kinds and amounts beyond a drink are refused.
        for line in [
            "intake water 0.5l", "intake water 12oz", "intake beer 500ml", "intake water 9000ml", "intake carbs 30ml",
            "intake water -5ml", "intake water", "start preset=Hill_Repeats",
        ] {
            XCTAssertThrowsError(try Journal.event(Substring("2024-05-01T08:12:00.000000Z " + line)), line)
        }
    }

    func testBadLinesAreReportedByNumberAndTheRestIsRead() {
        let text = """
            # cyclelog journal 1
            2024-05-01T08:00:00.510000Z notify C0:11:22:33:44:55 2a63 2000fa002a000040
            yesterday notify C0:11:22:33:44:55 2a63 2000
            2024-05-01T08:00:01.000000Z notify C0:11:22:33:44:55 2a63 2000fa0
            2024-05-01T08:00:01.000000Z jump
            2024-05-01T08:00:01.000000Z start goal=forever

            2024-05-01T08:00:02.000000Z end
            """
        let read = Journal.read(text)
        // A goal that cannot be one is reported, but the start it came with is kept: without it the ride
        // would lose its start time and every setting on the line.
        XCTAssertEqual(read.events.count, 3)
        XCTAssertEqual(read.lines, [2, 6, 8])
        XCTAssertEqual(read.problems.map(\.record), [3, 4, 5, 6])
        XCTAssertTrue(read.problems[1].message.contains("not hex bytes"), read.problems[1].message)
        XCTAssertTrue(read.problems[2].message.contains("unknown event 'jump'"), read.problems[2].message)
    }

    /// A journal saved with Windows line ends (CRLF, which Swift counts as one character), or with a line that
    /// ends in a lone CR, reads as the same lines: each line's number and event, the CR not part of any value.
    func testWindowsLineEndsReadAsTheSameLines() {
        let lines = [
            "# cyclelog journal 1", "2024-05-01T08:00:00.000000Z connect C0:11:22:33:44:55 Power\\u0020meter",
            "2024-05-01T08:00:00.000000Z start indoor", "",
            "2024-05-01T08:00:00.510000Z notify C0:11:22:33:44:55 2a63 2000fa002a000040",
            "2024-05-01T08:00:02.000000Z end",
        ]
        let unix = Journal.read(lines.joined(separator: "\n"))
        XCTAssertEqual(unix.events.count, 4)
        XCTAssertEqual(unix.lines, [2, 3, 5, 6])
        XCTAssertEqual(unix.problems.map(\.record), [])
        for ending in ["\r\n", "\r\n\r\n"] {
            let windows = Journal.read(lines.joined(separator: ending) + ending)
            XCTAssertEqual(windows.events, unix.events, ending.debugDescription)
            XCTAssertEqual(windows.problems.map(\.record), [], ending.debugDescription)
        }
        let mixed = Journal.read(lines.enumerated().map { $1 + ($0 % 2 == 0 ? "\r" : "") }.joined(separator: "\n"))
        XCTAssertEqual(mixed.events, unix.events)
        XCTAssertEqual(mixed.lines, unix.lines)
    }

    /// The fuzzer's find: a name starting with a combining accent joined the `=` (or the space) before it into one
    /// character, so the line no longer read back and the ride lost its start.
    func testNamesStartingWithACombiningMarkReadBack() throws {
        let events = [
            RideEvent(timeMicroseconds: 0, .control(.start(WorkoutPlan(name: "\u{616}", location: .indoor)))),
            RideEvent(timeMicroseconds: 1, .connected(sensor: "C0:11:22:33:44:55", name: "\u{301}Stages")),
            RideEvent(timeMicroseconds: 2, .control(.marker("\u{200D}\u{1F3FB} top"))),
        ]
        for event in events {
            let line = Journal.line(event)
            XCTAssertEqual(try Journal.event(Substring(line)), event, line)
        }
        // \u takes exactly four hex digits: a sign is not one.
        let start = try Journal.event("2021-02-18T13:02:00Z start name=\\u+616")
        XCTAssertEqual(start.kind, .control(.start(WorkoutPlan(name: "u+616"))))
    }

    func testSettingsThatCannotBeReadAreNamed() {
        let text = """
            # cyclelog journal 1
            2024-05-01T08:00:00.000000Z wheel * 20
            2024-05-01T08:00:00.000000Z auto-pause below=1.0
            2024-05-01T08:00:00.000000Z auto-pause below=fast after=5
            2024-05-01T08:00:00.000000Z auto-pause below=1.0 after=0
            2024-05-01T08:00:00.000000Z auto-pause after=5 below=0.5
            """
        let read = Journal.read(text)
        XCTAssertEqual(read.problems.map(\.record), [2, 3, 4, 5])
        XCTAssertTrue(read.problems[0].message.contains("500–4000"), read.problems[0].message)
        XCTAssertTrue(read.problems[1].message.contains("needs below="), read.problems[1].message)
        XCTAssertTrue(read.problems[2].message.contains("'below=fast'"), read.problems[2].message)
        XCTAssertTrue(read.problems[3].message.contains("'after=0'"), read.problems[3].message)
        // The words in either order.
        XCTAssertEqual(
            read.events.map(\.kind), [.setting(.autoPause(AutoPause(belowSpeedMetersPerSecond: 0.5, afterSeconds: 5)))])
    }

    func testTheCompactFormKeepsEveryEventExactly() throws {
        var many = events
        for index in 0..<500 {
            let value = CyclingPowerValue.bytes(watts: index, crank: index / 2)
            many.append(
                RideEvent(
                    timeMicroseconds: 1_714_550_410_000_000 + Int64(index) * 250_123,
                    .notification(sensor: "C0:11:22:33:44:55", characteristic: 0x2A63, value: value)))
        }
        let packed = CompactJournal.encode(many)
        XCTAssertEqual(try CompactJournal.decode(packed), many)
        // Eight-octet values arriving four times a second pack to a few octets each.
        XCTAssertLessThan(packed.count, 500 * 4)
        XCTAssertThrowsError(try CompactJournal.decode(Array(packed.dropLast(5))))
        // One characteristic's notifications, filtered by value, without decoding the rest: the same events.
        let evenWatts: ([UInt8]) -> Bool = { $0.count > 2 && $0[2] % 2 == 0 }
        let expected = many.filter {
            if case .notification(_, 0x2A63, let value) = $0.kind { return evenWatts(value) }
            return false
        }
        XCTAssertGreaterThanOrEqual(expected.count, 250, "the 250 even-watt values among those added")
        XCTAssertEqual(try CompactJournal.notifications(packed, of: 0x2A63, where: evenWatts), expected)
    }

    /// A chunk stored by the first packing (event by event, values XORed) reads back as the events of the journal
    /// it was stored from, whole or one characteristic at a time: every database written before still reads.
    func testChunksOfTheFirstPackingStillReadBack() throws {
        let stored = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/stored")
        let chunk = try [UInt8](Data(contentsOf: stored.appendingPathComponent("first-packing.chunk")))
        let journal = Journal.read(
            try String(contentsOf: stored.appendingPathComponent("first-packing.journal"), encoding: .utf8))
        XCTAssertEqual(journal.problems.map(\.message), [])
        XCTAssertNotEqual(try Zlib.inflate(chunk).first, ChannelPacking.mark, "the fixture is of the first packing")
        XCTAssertEqual(try CompactJournal.decode(chunk), journal.events)
        let power = journal.events.filter {
            if case .notification(_, 0x2A63, _) = $0.kind { return true }
            return false
        }
        XCTAssertGreaterThan(power.count, 100)
        XCTAssertEqual(try CompactJournal.notifications(chunk, of: 0x2A63) { _ in true }, power)
        // Packed again, by channel: the same events, in less space.
        let repacked = CompactJournal.encode(journal.events)
        XCTAssertEqual(try Zlib.inflate(repacked).first, ChannelPacking.mark)
        XCTAssertEqual(try CompactJournal.decode(repacked), journal.events)
        XCTAssertEqual(try CompactJournal.notifications(repacked, of: 0x2A63) { _ in true }, power)
        XCTAssertLessThan(repacked.count, chunk.count)
    }

    /// Two sensors sending the same characteristic, reads among notifications, values that change length and times
    /// that go back: the channel packing keeps each event, in order.
    func testTheChannelPackingKeepsInterleavedChannelsInOrder() throws {
        var events: [RideEvent] = []
        var random = SplitMix64(seed: 7)
        let sensors = ["C0:11:22:33:44:55", "D4:22:33:44:55:66"]
        var time: Int64 = 1_714_550_400_000_000
        for index in 0..<2000 {
            time += Int64.random(in: -5_000...400_000, using: &random)
            let sensor = sensors[Int.random(in: 0...1, using: &random)]
            let length = Int.random(in: 0...12, using: &random)
            let value = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            switch index % 50 {
            case 7:
                events.append(
                    RideEvent(timeMicroseconds: time, .read(sensor: sensor, characteristic: 0x2A63, value: value)))
            case 19: events.append(RideEvent(timeMicroseconds: time, .disconnected(sensor: sensor)))
            case 20:
                events.append(
                    RideEvent(
                        timeMicroseconds: time, .connected(sensor: sensor, name: index % 100 == 20 ? nil : "Left")))
            case 33:
                events.append(RideEvent(timeMicroseconds: time, .wheelCircumference(sensor: sensor, millimetres: 2096)))
            case 41: events.append(RideEvent(timeMicroseconds: time, .control(.marker("m\(index)"))))
            default:
                events.append(
                    RideEvent(
                        timeMicroseconds: time,
                        .notification(sensor: sensor, characteristic: index % 3 == 0 ? 0x2A5B : 0x2A63, value: value)))
            }
        }
        let packed = CompactJournal.encode(events)
        XCTAssertEqual(try CompactJournal.decode(packed), events)
        let csc = events.filter {
            if case .notification(_, 0x2A5B, _) = $0.kind { return true }
            return false
        }
        XCTAssertEqual(try CompactJournal.notifications(packed, of: 0x2A5B) { _ in true }, csc)
        XCTAssertEqual(try CompactJournal.decode(CompactJournal.encode([RideEvent]())), [])
    }

    /// The reader of plain GATT lines (`Journal.gattEvent`, from the bytes) and the reader of every line
    /// (`anyEvent`, by words) read alike: every line of the fixture journals and lines written every other way. A
    /// line the first does not take is the second's, which reads it or says what is wrong with it.
    func testPlainGATTLinesReadAsEveryLineIs() throws {
        let time = "2024-05-01T08:00:00.250000Z"
        let written =
            [
                "notify C0:11:22:33:44:55 2a63 2000fa002a000040", "read AA 2A19 5F", "write F1:22 2ad9 05 c8 00",
                "notify AA 2a63", "notify AA 2a63 ", "notify AA 2a63  0102 ", "notify AA 2a6 01", "notify AA 0 01",
                "notify AA 02a63 01", "notify AA +2a6 01", "notify AA 0x2a63 01", "notify AA 2a63 012",
                "notify AA 2a63 zz", "notify AA  2a63 01", "notify  AA 2a63 01", "notify capteur-é 2a63 01",
                "notify A\tB 2a63 01", "Notify AA 2a63 01", "notifyx AA 2a63 01", "indicate AA 2a63 01", "notify",
                "notify AA", "notify AA 2a63 01\u{7F}", "connect AA Stages", "lap",
            ].map { "\(time) \($0)" } + [
                "2024-05-01T08:00:00.25Z notify AA 2a63 01", "2024-05-01T08:00:00Z notify AA 2a63 01",
                "2024-02-30T08:00:00Z notify AA 2a63 01", "2024-05-01 08:00:00Z notify AA 2a63 01",
                " \(time) notify AA 2a63 01",
            ]
        // The devices' journals, and two real rides' (Fixtures/README.md).
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures")
        let devices = fixtures.appendingPathComponent("journals")
        let files =
            try FileManager.default.contentsOfDirectory(atPath: devices.path).sorted().filter {
                $0.hasSuffix(".journal")
            }.map(devices.appendingPathComponent)
            + [
                "rides/sweatpy_6449921903_ACTIVITY.journal", "rides/sweatpy_2020-06-01-16-52-40.journal",
            ].map(fixtures.appendingPathComponent)
        var fixtureLines: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            fixtureLines += text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        }
        XCTAssertGreaterThan(fixtureLines.count, 1000)
        var taken = 0
        for line in written + fixtureLines {
            var sensors = Journal.SensorNames()
            let quick = line.utf8.withContiguousStorageIfAvailable { Journal.gattEvent($0, sensors: &sensors) } ?? nil
            let whole = Result { () throws(Journal.LineError) in try Journal.anyEvent(Substring(line)) }
            if let quick {
                taken += 1
                XCTAssertEqual(try? whole.get(), quick, line)
            }
            XCTAssertEqual(try? Journal.event(Substring(line)), try? whole.get(), line)
        }
        // The lines the first reader takes are nearly all of a ride's: its reason to be.
        let plain = fixtureLines.filter { $0.contains(" notify ") || $0.contains(" read ") || $0.contains(" write ") }
        XCTAssertGreaterThanOrEqual(taken, plain.count, "every plain GATT line of the fixtures is taken")
        XCTAssertGreaterThan(plain.count * 10, fixtureLines.count * 9)
    }
}

/// A CPM value with power and crank data (flags 0x0020), for volume tests.
enum CyclingPowerValue {
    static func bytes(watts: Int, crank: Int) -> [UInt8] {
        [
            0x20, 0x00, UInt8(watts & 0xFF), UInt8(watts >> 8 & 0xFF), UInt8(crank & 0xFF), UInt8(crank >> 8 & 0xFF),
            0x00, 0x04,
        ]
    }
}

final class UndoLineTests: XCTestCase {
    /// `undo TIME VERB` names the action it reverses by its line's time and verb, and reads back to the same event
    /// through the text and the stored form.
    func testAnUndoNamesTheActionByItsTimeAndVerb() throws {
        let events = [
            RideEvent(timeMicroseconds: 1_714_550_403_000_000, .control(.lap)),
            RideEvent(
                timeMicroseconds: 1_714_550_410_250_000,
                .control(.undo(UndoneAction(timeMicroseconds: 1_714_550_403_000_000, verb: "lap")))),
            RideEvent(
                timeMicroseconds: 1_714_550_411_000_000,
                .control(.undo(UndoneAction(timeMicroseconds: 1_714_550_400_700_000, verb: "trainer")))),
        ]
        let text = Journal.text(events)
        XCTAssertEqual(
            text.split(separator: "\n").dropFirst(2).first,
            "2024-05-01T08:00:10.250000Z undo 2024-05-01T08:00:03.000000Z lap")
        XCTAssertEqual(Journal.read(text).events, events)
        XCTAssertEqual(try CompactJournal.decode(CompactJournal.encode(events)), events)
        for bad in [
            "undo", "undo 2024-05-01T08:00:03.000000Z", "undo yesterday lap", "undo 2024-05-01T08:00:03.000000Z start",
            "undo 2024-05-01T08:00:03.000000Z lap lap",
        ] {
            XCTAssertEqual(Journal.read("2024-05-01T08:00:10.000000Z \(bad)\n").problems.count, 1, bad)
        }
    }
}
