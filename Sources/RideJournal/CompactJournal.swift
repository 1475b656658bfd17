import CZlib
import Workouts

/// The journal as it is kept in the database: the same events as the text journal, packed and deflated, so that
/// the raw data of every ride costs about as much as its FIT file. Each chunk stands alone (its own sensor table
/// and baselines), so a ride cut short by a crash keeps every chunk that was written.
///
/// Packing, per event: kind (1 octet), time since the previous event (zig-zag varint, µs), then by kind. A
/// notification's value is XORed with the previous value of the same sensor and characteristic: counters and
/// flags repeat, and deflate turns the zeros into almost nothing.
public enum CompactJournal {
    public typealias DecodeError = PackedDataError

    private enum Kind: UInt8 {
        case sensor = 0, notification, read, connected, disconnected, wheel, control
    }

    public static func encode(_ events: some Collection<RideEvent>) -> [UInt8] {
        var writer = PackedWriter()
        // A chunk names a handful of sensors and characteristics: lists searched in order cost less than hashing
        // an address or a key per event.
        var sensors: [String] = []
        var previousValues: [(key: Int, value: [UInt8])] = []
        var lastTime: Int64 = 0
        func sensorIndex(_ address: String) -> Int {
            for index in sensors.indices where sensors[index] == address { return index }
            let index = sensors.count
            sensors.append(address)
            writer.byte(Kind.sensor.rawValue)
            writer.text(address)
            return index
        }
        for event in events {
            let sensor = event.sensor.map(sensorIndex)
            func header(_ kind: Kind) {
                writer.byte(kind.rawValue)
                // Wrapping: any two times have a difference that round-trips, however far apart (a damaged clock).
                writer.signed(event.timeMicroseconds &- lastTime)
                lastTime = event.timeMicroseconds
                if let sensor { writer.unsigned(UInt64(sensor)) }
            }
            switch event.kind {
            case .notification(_, let characteristic, let value), .read(_, let characteristic, let value):
                let isNotification = if case .notification = event.kind { true } else { false }
                header(isNotification ? .notification : .read)
                writer.unsigned(UInt64(characteristic))
                writer.unsigned(UInt64(value.count))
                let key = (sensor ?? 0) << 17 | Int(characteristic) << 1 | (isNotification ? 1 : 0)
                guard let slot = previousValues.firstIndex(where: { $0.key == key }) else {
                    writer.bytes(value)
                    previousValues.append((key, value))
                    break
                }
                writer.xored(value, with: previousValues[slot].value)
                previousValues[slot].value = value
            case .connected(_, let name):
                header(.connected)
                writer.text(name ?? "")
            case .disconnected:
                header(.disconnected)
            case .wheelCircumference(_, let millimetres):
                header(.wheel)
                writer.unsigned(UInt64(millimetres))
            case .control, .setting:
                // Controls and settings are rare; their journal line is the simplest exact encoding.
                header(.control)
                writer.text(Journal.line(RideEvent(timeMicroseconds: 0, event.kind)))
            }
        }
        return Zlib.deflate(writer.bytes)
    }

    public static func decode(_ compressed: [UInt8]) throws(DecodeError) -> [RideEvent] {
        try decode(compressed, only: nil) { _ in true }
    }

    /// Only the notifications of one characteristic whose value `keep` accepts; the bytes of every other value
    /// are skipped, not decoded (each value is XORed with its own sensor's and characteristic's previous one).
    public static func notifications(
        _ compressed: [UInt8], of characteristic: UInt16, where keep: ([UInt8]) -> Bool
    ) throws(DecodeError) -> [RideEvent] {
        try decode(compressed, only: characteristic, where: keep)
    }

    private static func decode(
        _ compressed: [UInt8], only wanted: UInt16?, where keep: ([UInt8]) -> Bool
    ) throws(DecodeError) -> [RideEvent] {
        func inflate(_ bytes: [UInt8]) throws(DecodeError) -> [UInt8] {
            do { return try Zlib.inflate(bytes) } catch {
                throw DecodeError(.corrupt, description: "stored journal: \(error)")
            }
        }
        var reader = PackedReader(try inflate(compressed))
        var sensors: [String] = []
        var previousValues: [Int: [UInt8]] = [:]
        var time: Int64 = 0
        var events: [RideEvent] = []
        while !reader.atEnd {
            guard let kind = Kind(rawValue: try reader.byte()) else {
                throw DecodeError(.malformed, description: "an unknown event kind in the stored journal")
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
                    throw DecodeError(.malformed, description: "a sensor number the stored journal never defined")
                }
                sensorIndex = Int(number)
                sensor = sensors[sensorIndex]
            }
            if wanted != nil && kind != .notification && kind != .read {
                // Read past it only to keep the reader in step.
                if kind == .connected || kind == .control { _ = try reader.text() }
                if kind == .wheel { _ = try reader.unsigned() }
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
            case .connected:
                let name = try reader.text()
                events.append(
                    RideEvent(timeMicroseconds: time, .connected(sensor: sensor, name: name.isEmpty ? nil : name)))
            case .disconnected:
                events.append(RideEvent(timeMicroseconds: time, .disconnected(sensor: sensor)))
            case .wheel:
                events.append(
                    RideEvent(
                        timeMicroseconds: time,
                        .wheelCircumference(sensor: sensor, millimetres: Int(clamping: try reader.unsigned()))))
            case .control:
                let line = try reader.text()
                guard var event = try? Journal.event(Substring(line)), event.sensor == nil else {
                    throw DecodeError(.malformed, description: "an unreadable control in the stored journal: \(line)")
                }
                event.timeMicroseconds = time
                events.append(event)
            case .sensor:
                break
            }
        }
        return events
    }
}
