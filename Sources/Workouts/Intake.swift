/// Water or food taken during a ride, as HealthKit's second device adds dietary water to a workout. Stored in
/// one unit per kind: millilitres of water, grams of carbohydrate.
public struct Intake: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case water
        case carbs

        /// The unit amounts of this kind are kept in.
        public var unit: String { self == .water ? "ml" : "g" }
        /// The units accepted for it, with their size in `unit`: a US fluid ounce is 29.5735 ml.
        public var units: [(name: String, size: Double)] {
            self == .water ? [("ml", 1), ("l", 1000), ("oz", 29.5735)] : [("g", 1)]
        }
        /// More than this at once is a typing slip (10 l, 20 kg), not a drink or a gel.
        var largest: Double { self == .water ? 5000 : 1000 }
    }

    public var kind: Kind
    /// In `kind.unit`.
    public var amount: Double

    /// An amount in one of the kind's units (`ml`, `l`, `oz` for water; `g` for carbs), or nil when the unit is
    /// not one of them or the amount is not above 0 and at most 5 l of water or 1 kg of carbs.
    public init?(_ kind: Kind, amount: Double, unit: String) {
        guard let size = kind.units.first(where: { $0.name == unit.lowercased() })?.size else { return nil }
        let inUnit = (amount * size * 10).rounded() / 10
        guard inUnit > 0, inUnit <= kind.largest else { return nil }
        self.kind = kind
        self.amount = inUnit
    }

    /// `250ml`, `0.5l`, `12oz` (water) or `30g` (carbs): a number followed by a unit.
    public init?(_ kind: Kind, _ text: some StringProtocol) {
        guard let (amount, unit) = Self.split(text) else { return nil }
        self.init(kind, amount: amount, unit: unit)
    }

    /// `0.5l` → (0.5, `l`): the number and the letters after it.
    public static func split(_ text: some StringProtocol) -> (amount: Double, unit: String)? {
        let unit = String(text.reversed().prefix { $0.isLetter }.reversed())
        guard let amount = Double(text.dropLast(unit.count)) else { return nil }
        return (amount, unit)
    }

    /// The accepted forms, for a message.
    public static func forms(_ kind: Kind) -> String {
        kind == .water ? "an amount such as 250ml, 0.5l or 12oz (at most 5 l)" : "an amount such as 30g (at most 1 kg)"
    }

    /// `water 250ml`: the journal's words, read back by `init?(journal:)`.
    public var description: String { "\(kind.rawValue) \(compact(amount))\(kind.unit)" }

    /// `water 250ml` or `carbs 30g`.
    public init?(journal text: some StringProtocol) {
        let words = text.split(separator: " ")
        guard words.count == 2, let kind = Kind(rawValue: String(words[0])),
            words[1].lowercased().hasSuffix(kind.unit)
        else { return nil }
        self.init(kind, words[1])
    }
}
