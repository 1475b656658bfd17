import Workouts

/// The journal as it is kept in the database: the same events as the text journal, packed and deflated, so that
/// the raw data of every ride costs less than its FIT file. Each chunk stands alone (its own sensor table and
/// baselines), so a ride cut short by a crash keeps every chunk that was written.
///
/// Chunks are packed by channel (`ChannelPacking`): the values of one sensor's characteristic, their times and
/// their lengths each kept together, so that what repeats lies side by side for deflate. Databases written before
/// hold chunks packed event by event (`EventPacking`), which are still read; the first octet tells them apart.
public enum CompactJournal {
    public typealias DecodeError = PackedDataError

    /// How the events other than values are told apart in a packed chunk (the numbers are stored).
    enum Kind: UInt8 {
        case sensor = 0, notification, read, connected, disconnected, wheel, control, write
    }

    /// (Concrete collections, not generic ones: code called across modules is not specialised, and a generic
    /// walk over 100 000 events costs a witness call per step.)
    public static func encode(_ events: ArraySlice<RideEvent>) -> [UInt8] {
        Zlib.deflate(ChannelPacking.pack(events), effort: .fast)
    }

    public static func encode(_ events: [RideEvent]) -> [UInt8] {
        encode(events[...])
    }

    public static func decode(_ compressed: [UInt8]) throws(DecodeError) -> [RideEvent] {
        try decode(compressed, only: nil) { _ in true }
    }

    /// Only the notifications of one characteristic whose value `keep` accepts; the bytes of every other value
    /// are skipped, not decoded.
    public static func notifications(
        _ compressed: [UInt8], of characteristic: UInt16, where keep: ([UInt8]) -> Bool
    ) throws(DecodeError) -> [RideEvent] {
        try decode(compressed, only: characteristic, where: keep)
    }

    private static func decode(
        _ compressed: [UInt8], only wanted: UInt16?, where keep: ([UInt8]) -> Bool
    ) throws(DecodeError) -> [RideEvent] {
        let packed: [UInt8]
        do { packed = try Zlib.inflate(compressed) } catch {
            throw DecodeError(.corrupt, description: "stored journal: \(error)")
        }
        if packed.first == ChannelPacking.mark {
            return try ChannelPacking.unpack(packed, only: wanted, where: keep)
        }
        return try EventPacking.unpack(packed, only: wanted, where: keep)
    }

    /// An event other than a value (a connection, a disconnection, a wheel size, a control or a setting) from
    /// its payload, which both packings write after its kind, time and sensor (a control has no sensor: its
    /// journal line, the simplest exact form of a rare event, is the payload). Nil for the kinds of values.
    static func otherEvent(
        _ kind: Kind, at time: Int64, sensor: String, _ reader: inout PackedReader
    ) throws(DecodeError) -> RideEvent? {
        switch kind {
        case .connected:
            let name = try reader.text()
            return RideEvent(timeMicroseconds: time, .connected(sensor: sensor, name: name.isEmpty ? nil : name))
        case .disconnected:
            return RideEvent(timeMicroseconds: time, .disconnected(sensor: sensor))
        case .wheel:
            let millimetres = Int(clamping: try reader.unsigned())
            return RideEvent(timeMicroseconds: time, .wheelCircumference(sensor: sensor, millimetres: millimetres))
        case .control:
            let line = try reader.text()
            guard var event = try? Journal.event(Substring(line)), event.sensor == nil else {
                throw DecodeError(.malformed, description: "an unreadable control in the stored journal: \(line)")
            }
            event.timeMicroseconds = time
            return event
        case .write:
            let characteristic = UInt16(truncatingIfNeeded: try reader.unsigned())
            let value = try reader.sums(try reader.count(), onto: [])
            return RideEvent(
                timeMicroseconds: time, .write(sensor: sensor, characteristic: characteristic, value: value))
        case .sensor, .notification, .read:
            return nil
        }
    }
}
