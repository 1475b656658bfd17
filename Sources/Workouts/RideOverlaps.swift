/// Rides of one rider that overlap in time are one ride recorded twice (a capture and the bike computer's file,
/// two collectors): one rider rides one bike at a time. Each group of overlapping rides counts once in the
/// statistics (the FTP, the weekly load): the ride the rider chose most recently, else the one stored first.
public struct RideOverlaps: Equatable, Sendable {
    /// A stored ride as the grouping sees it.
    public struct Ride: Equatable, Sendable {
        public var id: Int64
        public var startMicroseconds: Int64
        public var endMicroseconds: Int64
        /// When the rider chose this ride to count among the rides it overlaps (`cyclelog duplicates keep`).
        public var chosenMicroseconds: Int64?

        public init(id: Int64, startMicroseconds: Int64, endMicroseconds: Int64, chosenMicroseconds: Int64? = nil) {
            self.id = id
            self.startMicroseconds = startMicroseconds
            self.endMicroseconds = endMicroseconds
            self.chosenMicroseconds = chosenMicroseconds
        }
    }

    /// Rides that overlap, directly or through one another, oldest start first; `counted` is the one the
    /// statistics use.
    public struct Group: Equatable, Sendable {
        public var rides: [Ride]
        public var counted: Int64
        /// The ids the statistics leave out.
        public var setAside: [Int64] { rides.map(\.id).filter { $0 != counted } }

        /// How long the rides all share, in seconds (0 when a chain overlaps only pairwise).
        public var commonSeconds: Double {
            let start = rides.map(\.startMicroseconds).max() ?? 0
            let end = rides.map(\.endMicroseconds).min() ?? 0
            return Double(max(0, end - start)) / 1_000_000
        }
    }

    /// Only the groups with two rides or more.
    public var groups: [Group]

    /// Groups the rides; a ride without duration (start = end) overlaps nothing.
    public init(_ rides: [Ride]) {
        let sorted = rides.sorted { ($0.startMicroseconds, $0.id) < ($1.startMicroseconds, $1.id) }
        var groups: [Group] = []
        var current: [Ride] = []
        var currentEnd = Int64.min
        func close() {
            if current.count > 1 { groups.append(Group(rides: current, counted: Self.choose(current))) }
        }
        for ride in sorted {
            if ride.startMicroseconds < currentEnd, ride.startMicroseconds < ride.endMicroseconds {
                current.append(ride)
                currentEnd = max(currentEnd, ride.endMicroseconds)
            } else {
                close()
                current = [ride]
                currentEnd = ride.endMicroseconds
            }
        }
        close()
        self.groups = groups
    }

    /// Every ride the statistics leave out.
    public var setAside: Set<Int64> { Set(groups.flatMap(\.setAside)) }

    /// For a ride the statistics leave out, the ride they count instead.
    public func countedInstead(of id: Int64) -> Int64? {
        group(of: id).flatMap { $0.counted == id ? nil : $0.counted }
    }

    /// The group a ride belongs to, if it overlaps another.
    public func group(of id: Int64) -> Group? {
        groups.first { group in group.rides.contains { $0.id == id } }
    }

    /// The rider's latest choice, else the ride stored first (the lowest id).
    static func choose(_ rides: [Ride]) -> Int64 {
        let choices = rides.compactMap { ride in ride.chosenMicroseconds.map { ($0, ride.id) } }
        if let latest = choices.max(by: <) { return latest.1 }
        return rides.map(\.id).min() ?? 0
    }
}
