import CyclingSensors
import SensorHub

/// What the sensor hub sends its apps, made in one place whatever carries it (Bluetooth, DirCon) and made the same
/// again by the replay of a ride's journal (`HubReplay`): each reading re-broadcast (`HubBroadcast`) at its time in
/// the journal, and an app's Set Cumulative Value (the SC Control Point) carried out before the first reading
/// journaled after it, so that the live hub and the replay count the same revolutions.
struct HubOutput: Sendable {
    private var broadcast = HubBroadcast()
    /// Set Cumulative Values not carried out yet: the count and the write's time in the journal.
    private var wheelCounts: [(count: UInt64, afterMicroseconds: Int64)] = []

    /// What `reading` sends, the revolutions set by the writes journaled before it carried out first.
    mutating func take(_ reading: LiveRecorder.LiveReading) -> [HubBroadcast.Notification] {
        while let first = wheelCounts.first, first.afterMicroseconds < reading.journalMicroseconds {
            broadcast.setWheelRevolutions(first.count)
            wheelCounts.removeFirst()
        }
        return broadcast.take(reading.readings, shown: reading.shown, at: reading.journalMicroseconds)
    }

    /// An app's write to the SC Control Point, journaled at `journalMicroseconds`: its answer
    /// (`HubBroadcast.speedAndCadenceAnswer`); a Set Cumulative Value counts from the next reading on.
    mutating func speedAndCadenceWritten(_ value: [UInt8], at journalMicroseconds: Int64) -> [UInt8] {
        let (answer, wheelRevolutions) = HubBroadcast.speedAndCadenceAnswer(value)
        if let wheelRevolutions { wheelCounts.append((wheelRevolutions, journalMicroseconds)) }
        return answer
    }
}
