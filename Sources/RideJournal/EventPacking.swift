import Workouts

/// How journal chunks were packed before `ChannelPacking`, read so that every ride stored then reads back the same:
/// per event, its kind (`CompactJournal.Kind`, 1 octet), the time since the previous event (zig-zag varint, µs),
/// then by kind; a sensor's address is defined by a `sensor` event before its first use. A value is XORed with the
/// previous value of the same sensor and characteristic.
enum EventPacking {
    typealias Kind = CompactJournal.Kind

    static func unpack(
        _ packed: [UInt8], only wanted: UInt16?, where keep: ([UInt8]) -> Bool
    ) throws(PackedDataError) -> [RideEvent] {
        var reader = PackedReader(packed)
        var sensors: [String] = []
        var previousValues: [Int: [UInt8]] = [:]
        var time: Int64 = 0
        var events: [RideEvent] = []
        while !reader.atEnd {
            guard let kind = Kind(rawValue: try reader.byte()) else {
                throw PackedDataError(.malformed, description: "an unknown event kind in the stored journal")
            }
            if kind == .sensor {
                sensors.append(try reader.text())
                continue
            }
            time &+= try reader.signed()
            var sensorIndex = 0
            var sensor = ""
            if kind != .control {
                let number = try reader.unsigned()
                guard number < sensors.count else {
                    throw PackedDataError(.malformed, description: "a sensor number the stored journal never defined")
                }
                sensorIndex = Int(number)
                sensor = sensors[sensorIndex]
            }
            if wanted != nil && kind != .notification && kind != .read {
                // Read past it only to keep the reader in step.
                if kind == .connected || kind == .control { _ = try reader.text() }
                if kind == .wheel { _ = try reader.unsigned() }
                if kind == .write {
                    _ = try reader.unsigned()
                    try reader.skip(try reader.count())
                }
                continue
            }
            switch kind {
            case .notification, .read:
                let characteristic = UInt16(truncatingIfNeeded: try reader.unsigned())
                let count = try reader.count()
                if let wanted, kind != .notification || characteristic != wanted {
                    try reader.skip(count)
                    continue
                }
                let key = sensorIndex << 17 | Int(characteristic) << 1 | (kind == .notification ? 1 : 0)
                // Changed in place: only a value that is kept costs its own copy (when the next one changes it).
                try reader.xored(count, onto: &previousValues[key, default: []])
                let value = previousValues[key, default: []]
                if !keep(value) { continue }
                events.append(
                    RideEvent(
                        timeMicroseconds: time,
                        kind == .notification
                            ? .notification(sensor: sensor, characteristic: characteristic, value: value)
                            : .read(sensor: sensor, characteristic: characteristic, value: value)))
            case .connected, .disconnected, .wheel, .control, .write:
                if let event = try CompactJournal.otherEvent(kind, at: time, sensor: sensor, &reader) {
                    events.append(event)
                }
            case .sensor:
                break
            }
        }
        return events
    }
}
