// libFuzzer entry point for the readers of files and stored data, compiled by Fuzz/run.sh with the Capture,
// RideJournal and Workouts modules and WorkoutStore's packing (swiftc -sanitize=fuzzer). CYCLELOG_FUZZ_TARGET names the reader:
//   btsnoop          a btsnoop capture through GATTReplay (records, ACL reassembly, ATT, handle mapping)
//   journal          a cyclelog journal's text, then the time-jump rule over its events
//   compact-journal  a stored journal chunk (deflated, packed events)
//   stored-blobs     a stored sample chunk and a stored statistics blob
// Every input must read or give an error — never crash, trap or allocate without bound.

import Capture
import RideJournal
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
    default:
        fputs("unknown CYCLELOG_FUZZ_TARGET \(target)\n", stderr)
        abort()
    }
    return 0
}
