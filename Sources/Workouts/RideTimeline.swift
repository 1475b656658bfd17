/// The time-jump rule (Docs/reference/workouts.md, "Clocks that jump"): a capture's or a file's times are judged by their continuity
/// before anything is built from them, so that one misdated record can neither stretch a ride over a year nor
/// silently cut off the rest of it.
///
/// - Events dated outside 1970–9999 (a flipped high bit) cannot belong to any ride: left out.
/// - The ride is the longest run of events whose times never go back (a longest non-decreasing subsequence); an
///   event dated before the one it follows, or after those that follow it, is left out and reported.
/// - Of what remains, a silence of more than `longestGapMicroseconds` is a clock fault, not a pause: a few events
///   on the far side of it are left out; a larger part is joined on to the ride, its times moved back by the jump.
/// - Nothing is ever materialised second by second across a jump, and no arithmetic on times can overflow.
public enum RideTimeline {
    /// The longest silence kept as a gap inside a ride: a lunch stop, a night in a bikepacking ride. Longer is a
    /// clock fault.
    public static let longestGapMicroseconds: Int64 = 12 * 3_600_000_000
    /// The times any event may carry: what a journal line can express (years 1970 to 9999).
    public static let plausibleMicroseconds: ClosedRange<Int64> = 0...253_402_300_799_999_999
    /// A part of a ride on the far side of a clock fault is dropped, not joined, when it is this small: a handful
    /// of misdated records, or a stray final line.
    static let strayPartEvents = 10

    /// One decision about the times, naming the first event (by its index in the input) it concerns.
    public struct Fault: Equatable, Sendable {
        public var eventIndex: Int
        public var message: String
    }

    /// The events in a consistent time order, and what was done to get there.
    public struct Repaired: Sendable {
        /// The events kept, in order, with their times corrected where a clock fault was joined.
        public var events: [RideEvent]
        /// For each kept event, its index in the input.
        public var indices: [Int]
        public var faults: [Fault]
        /// How many input events were left out.
        public var droppedCount: Int
    }

    /// The same rule for bare times (a FIT file's records): which to keep, their corrected times, and why.
    public static func repair(times: [Int64]) -> (indices: [Int], times: [Int64], faults: [Fault]) {
        // Any kind will do: only the times count. One without a boxed payload, so that the stand-ins cost nothing.
        let repaired = repair(times.map { RideEvent(timeMicroseconds: $0, .disconnected(sensor: "")) })
        return (repaired.indices, repaired.events.map(\.timeMicroseconds), repaired.faults)
    }

    public static func repair(_ input: [RideEvent]) -> Repaired {
        var faults: [Fault] = []
        var plausible: [Int] = []
        plausible.reserveCapacity(input.count)
        var implausible = 0
        // By index, reading only the time: a loop over the events themselves copies each one (its sensor's name
        // and value retained and released), 100 000 times for a 4-hour ride.
        for index in input.indices {
            if plausibleMicroseconds.contains(input[index].timeMicroseconds) {
                plausible.append(index)
            } else {
                implausible += 1
                if implausible == 1 {
                    faults.append(
                        Fault(
                            eventIndex: index,
                            message: "dated outside the years 1970 to 9999 (a damaged clock); left out"))
                }
            }
        }
        if implausible > 1 {
            faults[faults.count - 1].message += " (\(implausible) events like it)"
        }
        let ordered = longestNonDecreasingRun(plausible.map { input[$0].timeMicroseconds }).map { plausible[$0] }
        faults += outOfOrderFaults(input, plausible: plausible, kept: ordered)
        let (indices, times, jumpFaults) = joinClockFaults(input, ordered)
        faults += jumpFaults
        faults.sort { $0.eventIndex < $1.eventIndex }
        // A ride whose clock needed nothing (nearly every one) keeps its events as they are, not a copy.
        if indices.count == input.count && times.indices.allSatisfy({ times[$0] == input[$0].timeMicroseconds }) {
            return Repaired(events: input, indices: indices, faults: faults, droppedCount: 0)
        }
        var events: [RideEvent] = []
        events.reserveCapacity(indices.count)
        for (position, index) in indices.enumerated() {
            var event = input[index]
            event.timeMicroseconds = times[position]
            events.append(event)
        }
        return Repaired(events: events, indices: indices, faults: faults, droppedCount: input.count - indices.count)
    }

    /// The positions of a longest non-decreasing subsequence of `times` (patience sorting, O(n log n)); for times
    /// already in order, all of them.
    static func longestNonDecreasingRun(_ times: [Int64]) -> [Int] {
        if zip(times, times.dropFirst()).allSatisfy({ $0 <= $1 }) { return Array(times.indices) }
        var tails: [Int] = []  // position of the smallest last element of a run of each length
        var previous = [Int](repeating: -1, count: times.count)
        for position in times.indices {
            // The first run whose tail is later than this time (upper bound: equal times extend a run).
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if times[tails[middle]] <= times[position] { low = middle + 1 } else { high = middle }
            }
            previous[position] = low > 0 ? tails[low - 1] : -1
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var run: [Int] = []
        var position = tails.last ?? -1
        while position >= 0 {
            run.append(position)
            position = previous[position]
        }
        return run.reversed()
    }

    /// One fault per run of consecutive plausible events left out for being out of order.
    private static func outOfOrderFaults(_ input: [RideEvent], plausible: [Int], kept: [Int]) -> [Fault] {
        guard kept.count < plausible.count else { return [] }
        var faults: [Fault] = []
        var keptSet = Set(kept)
        keptSet.reserveCapacity(kept.count)
        var lastKeptTime: Int64?
        var runStart: Int?
        var runCount = 0
        func closeRun() {
            guard let start = runStart else { return }
            let time = input[start].timeMicroseconds
            let relation: String
            if let lastKeptTime {
                let (difference, later) =
                    time >= lastKeptTime ? (time &- lastKeptTime, true) : (lastKeptTime &- time, false)
                relation =
                    later
                    ? "dated \(describe(microseconds: difference)) after the event before it, while those after it are earlier"
                    : "dated \(describe(microseconds: difference)) before the event before it"
            } else {
                relation = "dated after the events that follow it"
            }
            let count = runCount == 1 ? "" : " (and the \(runCount - 1) events after it)"
            faults.append(Fault(eventIndex: start, message: "out of time order: \(relation); left out\(count)"))
            runStart = nil
            runCount = 0
        }
        for index in plausible {
            if keptSet.contains(index) {
                closeRun()
                lastKeptTime = input[index].timeMicroseconds
            } else {
                if runStart == nil { runStart = index }
                runCount += 1
            }
        }
        closeRun()
        return faults
    }

    /// Splits the ordered events at silences longer than a gap can be, drops stray parts and joins the rest.
    private static func joinClockFaults(
        _ input: [RideEvent], _ ordered: [Int]
    ) -> (indices: [Int], times: [Int64], faults: [Fault]) {
        var parts: [Range<Int>] = []
        var start = 0
        for position in ordered.indices.dropFirst()
        where input[ordered[position]].timeMicroseconds - input[ordered[position - 1]].timeMicroseconds
            > longestGapMicroseconds
        {
            parts.append(start..<position)
            start = position
        }
        parts.append(start..<ordered.count)
        guard parts.count > 1 else { return (ordered, ordered.map { input[$0].timeMicroseconds }, []) }
        let largest = parts.map(\.count).max() ?? 0
        var faults: [Fault] = []
        var indices: [Int] = []
        var times: [Int64] = []
        var shift: Int64 = 0
        var previousEnd: Int64?
        for part in parts {
            let first = input[ordered[part.lowerBound]].timeMicroseconds
            if part.count <= strayPartEvents && part.count < largest {
                let jump = previousEnd.map { first - $0 } ?? (input[ordered[part.upperBound]].timeMicroseconds - first)
                let side = previousEnd == nil ? "before" : "after"
                faults.append(
                    Fault(
                        eventIndex: ordered[part.lowerBound],
                        message:
                            "dated \(describe(microseconds: jump)) \(side) the rest of the ride (a clock fault); "
                            + (part.count == 1 ? "left out" : "left out with the \(part.count - 1) events after it")))
                continue
            }
            if let previousEnd {
                let jump = first - shift - previousEnd
                shift += jump
                faults.append(
                    Fault(
                        eventIndex: ordered[part.lowerBound],
                        message:
                            "the clock leapt \(describe(microseconds: jump)) forward here (a clock fault, not a pause): "
                            + "the events from here on are joined on, their times moved back by the jump"))
            }
            for position in part {
                indices.append(ordered[position])
                times.append(input[ordered[position]].timeMicroseconds - shift)
            }
            previousEnd = times.last
        }
        return (indices, times, faults)
    }

    /// `1 h 11 min`, `12 days`, `3.2 s`: the size of a jump in words.
    public static func describe(microseconds: Int64) -> String {
        let seconds = Double(microseconds) / 1_000_000
        if seconds < 60 { return "\((seconds * 10).rounded() / 10) s" }
        let minutes = Int64(seconds / 60)
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 48 * 60 {
            return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
        }
        let days = minutes / (24 * 60)
        return days < 730 ? "\(days) days" : "\(days / 365) years"
    }
}
