// libFuzzer entry point for the readers of files and stored data, compiled by Fuzz/run.sh with the Capture,
// RideJournal and Workouts modules and WorkoutStore's packing (swiftc -sanitize=fuzzer). CYCLELOG_FUZZ_TARGET names the reader:
//   btsnoop          a btsnoop capture through GATTReplay (records, ACL reassembly, ATT, handle mapping)
//   btsnoop-writer   monitor records (opcode, index, time, packet) through the capture's privacy filter and the
//                    btsnoop writer, read back by the btsnoop reader: the same records, in order
//   journal          a cyclelog journal's text, then the time-jump rule over its events
//   compact-journal  a stored journal chunk (deflated, packed events)
//   stored-blobs     a stored sample chunk and a stored statistics blob
//   zwo, erg         a workout file (.zwo, .erg/.mrc): a workout read is written as its canonical text, which reads
//                    back to the same workout; a .zwo written of it reads back to the same steps
//   fit-workout      a FIT workout file: the same, and the FIT file written of it reads back as FIT holds it
//   workout-text     the canonical text itself
// Every input must read or give an error — never crash, trap or allocate without bound.

import Capture
import RideJournal
import StructuredWorkouts
import WorkoutFiles
import Workouts

#if canImport(Glibc)
    import Glibc
#endif

private let target: String = {
    guard let name = getenv("CYCLELOG_FUZZ_TARGET") else { return "btsnoop" }
    return String(cString: name)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    switch target {
    case "btsnoop":
        if let replay = try? GATTReplay.read(bytes, explicitMap: [:], progress: nil) {
            _ = RideTimeline.repair(replay.events).events.count
        }
    case "btsnoop-writer":
        writeAndReadBack(bytes)
    case "journal":
        let journal = Journal.read(String(decoding: bytes, as: UTF8.self))
        let repaired = RideTimeline.repair(journal.events)
        // What a journal reads is what it writes: every event's line reads back to the same event.
        for event in repaired.events {
            let line = Journal.line(event)
            precondition((try? Journal.event(Substring(line))) == event, "journal line does not read back: \(line)")
        }
        // The builder over the ride's first ten minutes: enough for every control and sensor event, while a ride
        // of hours (legal once the time-jump rule has joined the gaps) would cost seconds per input.
        guard let first = repaired.events.first?.timeMicroseconds else { break }
        var builder = WorkoutBuilder()
        for event in repaired.events.prefix(200) where event.timeMicroseconds - first <= 600_000_000 {
            builder.add(event)
        }
        _ = builder.finish()
    case "compact-journal":
        if let events = try? CompactJournal.decode(bytes) {
            // A chunk that decodes re-encodes to one that decodes to the same events.
            precondition((try? CompactJournal.decode(CompactJournal.encode(events))) == events, "round trip")
        }
    case "stored-blobs":
        _ = try? StoredPacking.unpackSamples(bytes, firstSecond: 0)
        _ = try? StoredPacking.unpackStatistics(bytes)
        // The same bytes as the packed content behind a valid header (stored uncompressed: the size's high bit).
        let size = UInt32(bytes.count)
        let stored = [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24) | 0x80]
        _ = try? StoredPacking.unpackSamples(stored + bytes, firstSecond: 60)
    case "zwo":
        if let workout = try? ZWOFile.read(bytes) {
            checkTextRoundTrip(workout)
            if let written = try? ZWOFile.write(workout) {
                precondition(
                    (try? ZWOFile.read(written)) == ZWOFile.asWritten(workout),
                    "a .zwo written does not read back as a .zwo holds it")
            }
        }
    case "erg":
        if let workout = try? ERGFile.read(bytes, fileName: "fuzz") { checkTextRoundTrip(workout) }
    case "fit-workout":
        if let workout = try? FITWorkoutFile.read(bytes) {
            checkTextRoundTrip(workout)
            let written = FITWorkoutFile.write(workout, createdMicroseconds: 0)
            precondition(
                (try? FITWorkoutFile.read(written)) == FITWorkoutFile.asWritten(workout),
                "a FIT workout written does not read back as FIT holds it")
        }
    case "workout-text":
        if let workout = try? WorkoutText.parse(String(decoding: bytes, as: UTF8.self)) {
            checkTextRoundTrip(workout)
            var player = WorkoutPlayer(PlannedWorkout(workout, ftpWatts: 250))
            for _ in 0..<100 { player.advance(seconds: 7, meters: 30) }
        }
    default:
        fputs("unknown CYCLELOG_FUZZ_TARGET \(target)\n", stderr)
        abort()
    }
    return 0
}

/// A workout's canonical text reads back to the same workout.
private func checkTextRoundTrip(_ workout: StructuredWorkout) {
    precondition(
        (try? WorkoutText.parse(WorkoutText.text(workout))) == workout, "a workout's text does not read back the same")
}

/// The input as monitor records — opcode, index, 8 octets of time, a length octet, that many octets of packet —
/// each through the privacy filter (which must never trap on a packet), then all written with the btsnoop writer
/// (drained part by part, as a live capture writes) and read back with the btsnoop reader as the oracle.
private func writeAndReadBack(_ bytes: [UInt8]) {
    var filter = HCIPrivacyFilter(
        sensorServices: [0x1818], isNamedSensor: { $0.hasSuffix("1") },
        connectionAddress: { _, _ in "C0:11:22:33:44:51" })
    var writer = BtsnoopWriter(datalink: .linuxMonitor)
    var file: [UInt8] = []
    var written: [(opcode: UInt16, index: UInt16, time: Int64, packet: ArraySlice<UInt8>)] = []
    var offset = 0
    while bytes.count - offset >= 11 {
        let opcode = UInt16(bytes[offset] % 24)
        let index = UInt16(bytes[offset + 1])
        let time = bytes[(offset + 2)..<(offset + 10)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let length = min(Int(bytes[offset + 10]), bytes.count - offset - 11)
        let packet = bytes[(offset + 11)..<(offset + 11 + length)]
        _ = filter.keeps(opcode: opcode, index: index, packet)
        writer.appendMonitor(opcode: opcode, index: index, timeMicroseconds: time, packet)
        written.append((opcode, index, time, packet))
        if written.count % 3 == 0 { file += writer.drain() }
        offset += 11 + length
    }
    file += writer.drain()
    var read: [Btsnoop.Packet] = []
    let problems = try? Btsnoop.forEachPacket(in: file) { _, packet in read.append(packet) }
    precondition(problems?.isEmpty == true, "the reader found problems in what the writer wrote")
    precondition(read.count == written.count, "\(written.count) records written, \(read.count) read")
    for (packet, record) in zip(read, written) {
        let type: Btsnoop.PacketType =
            switch record.opcode {
            case 2: .command
            case 3: .event
            case 4, 5: .aclData
            case 13: .log
            default: .other
            }
        precondition(
            packet.type == type && packet.controllerIndex == record.index && packet.timeMicroseconds == record.time
                && packet.data.elementsEqual(record.packet)
                && packet.received == (record.opcode == 3 || record.opcode == 5),
            "a record read back differs from the one written")
    }
}
