import Formats

/// The kinds of a rider's data that another party may be given (a paired screen, a training service): named once
/// here, as the rider types them (`cyclelog-mirror pair --types power,cadence`, `grant NAME +hr`,
/// `cyclelog-sync account add strava … --without hr`). Docs/reference/data-types.md says what each covers.
///
/// A type not given is absent, as a denied read is in HealthKit: its values, and everything worked out from them,
/// are left out rather than refused, so that nobody can tell a value withheld from one never recorded.
public enum DataType: String, CaseIterable, Sendable, Comparable, Codable {
    /// Power: the live and 3-s figures, the series, and what is worked out from power (FTP, zones, the curve,
    /// W′ balance, training load).
    case power
    case cadence
    /// Speed and distance.
    case speed
    /// Heart rate (health data): given only when named, never by a shorthand.
    case hr
    /// Energy: the work done and the calories.
    case energy
    /// The rides recorded before: the list, each ride's summary, series and files, the reports over them.
    case history
    /// Food and drink: what was taken, seen and logged.
    case intake
    /// Starting, pausing, lapping and ending the ride, and steering its structured workout.
    case ride
    /// The smart trainer: its mode, targets, grade and resistance.
    case trainer

    public static func < (lhs: DataType, rhs: DataType) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// What the ride's numbers need to be seen: every measurement but heart rate, and the history.
    public static let read: Set<DataType> = [.power, .cadence, .speed, .energy, .history]
    /// `read`, and what a rider does from a screen: intake, the ride's controls and the trainer's.
    public static let control: Set<DataType> = read.union([.intake, .ride, .trainer])

    /// What a ride's sensors measured: the types a ride's files hold (and a training service may be sent
    /// without).
    public static let measured: Set<DataType> = [.power, .cadence, .speed, .hr, .energy]
    /// What a ride's journal holds: the measured types and what the rider logged (intake).
    public static let recorded: Set<DataType> = measured.union([.intake])

    /// The type of a channel's values.
    public init(_ channel: Channel) {
        switch channel {
        case .powerWatts: self = .power
        case .cadenceRPM: self = .cadence
        case .speedMetersPerSecond: self = .speed
        case .heartRateBPM: self = .hr
        }
    }

    /// The channel that carries this type's values, for the four that one does.
    public var channel: Channel? {
        switch self {
        case .power: .powerWatts
        case .cadence: .cadenceRPM
        case .speed: .speedMetersPerSecond
        case .hr: .heartRateBPM
        default: nil
        }
    }

    /// The words a rider may type for a type: its name and a longer one.
    static let aliases: [String: DataType] = [
        "heart-rate": .hr, "heartrate": .hr, "distance": .speed, "calories": .energy, "water": .intake,
        "ride-control": .ride, "trainer-control": .trainer,
    ]

    /// A type, or a shorthand (`read`, `control`), as a rider types it; nil for a word that is neither.
    public static func named(_ word: Substring) -> Set<DataType>? {
        let word = word.lowercased()
        if word == "read" { return read }
        if word == "control" { return control }
        if let type = DataType(rawValue: word) ?? aliases[word] { return [type] }
        return nil
    }

    /// A comma-separated list of types and shorthands (`power,cadence`, `control,hr`).
    public static func list(_ text: String) -> Result<Set<DataType>, ListError> {
        var types: Set<DataType> = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            let word = word.trimmingSpaces
            guard let named = named(word) else { return .failure(ListError(word: String(word))) }
            types.formUnion(named)
        }
        return .success(types)
    }

    /// Changes to a set of types: `+hr`, `-hr`, `+power,-cadence`; a word without a sign adds.
    public static func changes(_ text: String) -> Result<(add: Set<DataType>, remove: Set<DataType>), ListError> {
        var add: Set<DataType> = [], remove: Set<DataType> = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            var word = word.trimmingSpaces
            guard !word.isEmpty else { return .failure(ListError(word: "")) }
            let removing = word.first == "-"
            if word.first == "-" || word.first == "+" { word = word.dropFirst() }
            guard let named = named(word) else { return .failure(ListError(word: String(word))) }
            if removing {
                remove.formUnion(named)
                add.subtract(named)
            } else {
                add.formUnion(named)
                remove.subtract(named)
            }
        }
        return .success((add, remove))
    }

    /// The types as a list a rider reads and types back: `power,cadence,hr` (in the order declared).
    public static func text(_ types: Set<DataType>) -> String {
        types.sorted().map(\.rawValue).joined(separator: ",")
    }

    /// A word that names no type.
    public struct ListError: Error, CustomStringConvertible, Equatable {
        public var word: String

        public init(word: String) {
            self.word = word
        }

        public var description: String {
            "'\(word)' is not a type: the types are \(DataType.allCases.map(\.rawValue).joined(separator: ", ")) "
                + "(and read, control for their usual sets; hr is given only when named)"
        }
    }
}
