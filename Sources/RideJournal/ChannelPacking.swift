import Workouts

/// How a journal chunk is packed (inflated layout; every number a varint, signed ones zig-zag):
///
///     0xC2                              the mark (a chunk packed by `EventPacking` starts with an event kind, 0–6)
///     signed    base time               the chunk's first event's time, µs since the epoch
///     unsigned  sensor count, then each sensor's address as text
///     unsigned  channel count, then each channel: sensor number, characteristic, 1 notified / 0 read
///     unsigned  event count
///     section   order                   per event: 0 another event, n a value of channel n − 1
///     section   others                  per other event: kind, signed time since the base, sensor number (not for
///                                       a control), then its text, millimetres, characteristic and value (a
///                                       write: its length, then its octets) or nothing
///     section   per channel             value count; a section of times (per value the signed second difference:
///                                       the step since its previous value minus the step before, from the base);
///                                       a section of lengths; then the values, each octet minus (modulo 256) the
///                                       octet at the same place of the channel's previous value
///
/// (A section is its byte count, then its bytes.) A sensor sending at a steady rate leaves zeros in its times, a
/// field that does not change leaves zeros and a counter its usual step in its values, and each kind lies with its
/// own kind, which is what deflate keeps small: on a 4-hour capture it stores 40 % less than packing event by
/// event, at a fraction of the compression time (Benchmarks/README.md, "Benchmarks").
enum ChannelPacking {
    static let mark: UInt8 = 0xC2
    typealias Kind = CompactJournal.Kind

    /// The values one sensor sent for one characteristic (notified, or read), as they are packed.
    private struct Channel {
        let sensorNumber: Int
        let characteristic: UInt16
        let notified: Bool
        var count = 0
        var times = PackedWriter()
        var lengths = PackedWriter()
        var values = PackedWriter()
        var previousTime: Int64
        var previousStep: Int64 = 0
        var previousValue: [UInt8] = []

        init(sensorNumber: Int, characteristic: UInt16, notified: Bool, base: Int64) {
            self.sensorNumber = sensorNumber
            self.characteristic = characteristic
            self.notified = notified
            self.previousTime = base
        }

        mutating func add(_ time: Int64, _ value: [UInt8]) {
            count += 1
            // Wrapping: any two times have a difference that round-trips, however far apart (a damaged clock).
            let step = time &- previousTime
            times.signed(step &- previousStep)
            previousTime = time
            previousStep = step
            lengths.unsigned(UInt64(value.count))
            values.differences(value, from: previousValue)
            previousValue = value
        }

        var section: PackedWriter {
            var section = PackedWriter()
            section.unsigned(UInt64(count))
            section.section(times)
            section.section(lengths)
            section.bytes(values.bytes)
            return section
        }
    }

    static func pack(_ events: ArraySlice<RideEvent>) -> [UInt8] {
        let base = events.first?.timeMicroseconds ?? 0
        var sensors: [String] = []
        var channels: [Channel] = []
        var order = PackedWriter()
        var others = PackedWriter()
        // A chunk names a handful of sensors and characteristics: lists searched in order cost less than hashing
        // an address per event.
        func sensorNumber(_ address: String) -> Int {
            if let number = sensors.firstIndex(of: address) { return number }
            sensors.append(address)
            return sensors.count - 1
        }
        // The channels' keys apart from their streams, so that looking one up touches no stream.
        var keys: [(characteristic: UInt16, notified: Bool, sensor: String)] = []
        func add(_ sensor: String, _ characteristic: UInt16, notified: Bool, _ time: Int64, _ value: [UInt8]) {
            var found = keys.count
            for index in keys.indices
            where keys[index].characteristic == characteristic && keys[index].notified == notified
                && keys[index].sensor == sensor
            {
                found = index
                break
            }
            if found == keys.count {
                keys.append((characteristic, notified, sensor))
                channels.append(
                    Channel(
                        sensorNumber: sensorNumber(sensor), characteristic: characteristic, notified: notified,
                        base: base))
            }
            order.unsigned(UInt64(found + 1))
            channels[found].add(time, value)
        }
        func other(_ kind: Kind, _ time: Int64, _ sensor: String?) {
            order.unsigned(0)
            others.byte(kind.rawValue)
            others.signed(time &- base)
            if let sensor { others.unsigned(UInt64(sensorNumber(sensor))) }
        }
        for event in events {
            let time = event.timeMicroseconds
            switch event.kind {
            case .notification(let sensor, let characteristic, let value):
                add(sensor, characteristic, notified: true, time, value)
            case .read(let sensor, let characteristic, let value):
                add(sensor, characteristic, notified: false, time, value)
            case .connected(let sensor, let name):
                other(.connected, time, sensor)
                others.text(name ?? "")
            case .disconnected(let sensor):
                other(.disconnected, time, sensor)
            case .wheelCircumference(let sensor, let millimetres):
                other(.wheel, time, sensor)
                others.unsigned(UInt64(millimetres))
            case .write(let sensor, let characteristic, let value):
                // A trainer's requests are a few a minute: packed as they come, not as a channel.
                other(.write, time, sensor)
                others.unsigned(UInt64(characteristic))
                others.unsigned(UInt64(value.count))
                others.bytes(value)
            case .control, .setting, .hub:
                // Controls, settings and the hub's exchanges with an app are rare; their journal line is the simplest
                // exact encoding.
                other(.control, time, nil)
                others.text(Journal.line(RideEvent(timeMicroseconds: 0, event.kind)))
            }
        }
        var packed = PackedWriter()
        packed.byte(mark)
        packed.signed(base)
        packed.unsigned(UInt64(sensors.count))
        for sensor in sensors { packed.text(sensor) }
        packed.unsigned(UInt64(channels.count))
        for channel in channels {
            packed.unsigned(UInt64(channel.sensorNumber))
            packed.unsigned(UInt64(channel.characteristic))
            packed.byte(channel.notified ? 1 : 0)
        }
        packed.unsigned(UInt64(events.count))
        packed.section(order)
        packed.section(others)
        for channel in channels { packed.section(channel.section) }
        return packed.bytes
    }

    /// A channel's values read back in order.
    private struct ChannelReader {
        let sensor: String
        let characteristic: UInt16
        let notified: Bool
        var remaining: Int
        var times: PackedReader
        var lengths: PackedReader
        var values: PackedReader
        var time: Int64
        var step: Int64 = 0
        var value: [UInt8] = []

        init(sensor: String, characteristic: UInt16, notified: Bool, base: Int64, _ section: PackedReader)
            throws(PackedDataError)
        {
            self.sensor = sensor
            self.characteristic = characteristic
            self.notified = notified
            var section = section
            remaining = try section.count()
            times = try section.section()
            lengths = try section.section()
            values = section
            time = base
        }

        mutating func next() throws(PackedDataError) -> (time: Int64, value: [UInt8]) {
            guard remaining > 0 else {
                throw PackedDataError(.malformed, description: "more values of a channel than the stored journal holds")
            }
            remaining -= 1
            step &+= try times.signed()
            time &+= step
            value = try values.sums(Int(clamping: try lengths.unsigned()), onto: value)
            return (time, value)
        }
    }

    static func unpack(
        _ packed: [UInt8], only wanted: UInt16?, where keep: ([UInt8]) -> Bool
    ) throws(PackedDataError) -> [RideEvent] {
        var reader = PackedReader(packed)
        _ = try reader.byte()
        let base = try reader.signed()
        var sensors: [String] = []
        for _ in 0..<(try reader.count()) { sensors.append(try reader.text()) }
        func sensor(_ number: UInt64) throws(PackedDataError) -> String {
            guard number < sensors.count else {
                throw PackedDataError(.malformed, description: "a sensor number the stored journal never defined")
            }
            return sensors[Int(number)]
        }
        var heads: [(sensor: String, characteristic: UInt16, notified: Bool)] = []
        for _ in 0..<(try reader.count()) {
            heads.append(
                (
                    try sensor(try reader.unsigned()), UInt16(truncatingIfNeeded: try reader.unsigned()),
                    try reader.byte() != 0
                ))
        }
        // Every event takes at least an octet of the order, so a damaged count cannot ask for a huge list.
        let eventCount = try reader.count()
        var order = try reader.section()
        var others = try reader.section()
        var channels: [ChannelReader] = []
        for head in heads {
            channels.append(
                try ChannelReader(
                    sensor: head.sensor, characteristic: head.characteristic, notified: head.notified, base: base,
                    try reader.section()))
        }
        var events: [RideEvent] = []
        if wanted == nil { events.reserveCapacity(eventCount) }
        for _ in 0..<eventCount {
            let entry = try order.unsigned()
            guard entry > 0 else {
                // Another event: none is wanted when only one characteristic's values are.
                if wanted == nil { events.append(try other(&others, base: base, sensor: sensor)) }
                continue
            }
            guard entry <= channels.count else {
                throw PackedDataError(.malformed, description: "a channel number the stored journal never defined")
            }
            let index = Int(entry - 1)
            if let wanted, !channels[index].notified || channels[index].characteristic != wanted { continue }
            let (time, value) = try channels[index].next()
            if !keep(value) { continue }
            let channel = channels[index]
            events.append(
                RideEvent(
                    timeMicroseconds: time,
                    channel.notified
                        ? .notification(sensor: channel.sensor, characteristic: channel.characteristic, value: value)
                        : .read(sensor: channel.sensor, characteristic: channel.characteristic, value: value)))
        }
        guard order.atEnd, wanted != nil || (others.atEnd && channels.allSatisfy { $0.remaining == 0 }) else {
            throw PackedDataError(.malformed, description: "the stored journal holds more than its events")
        }
        return events
    }

    private static func other(
        _ others: inout PackedReader, base: Int64, sensor: (UInt64) throws(PackedDataError) -> String
    ) throws(PackedDataError) -> RideEvent {
        let kind = Kind(rawValue: try others.byte())
        let time = base &+ (try others.signed())
        guard let kind, kind != .sensor, kind != .notification, kind != .read else {
            throw PackedDataError(.malformed, description: "an unknown event kind in the stored journal")
        }
        let address = kind == .control ? "" : try sensor(try others.unsigned())
        // Not nil: the kinds of values were turned away above.
        return try CompactJournal.otherEvent(kind, at: time, sensor: address, &others)!
    }
}
