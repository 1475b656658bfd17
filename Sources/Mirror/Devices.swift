import Crypto
import Foundation
import Workouts

/// The screens paired with the mirror, and the pairings on offer.
///
/// A device's token is 256 bits from the system's random source, handed to the device once; only its SHA-256 is
/// kept, with the device's name, the data types it was granted (`DataType`), when it was paired and when it was
/// last seen, in a file only the mirror's user can read. Grants change without pairing again (`grant`). A pairing
/// is offered by `cyclelog-mirror pair`: a one-time token for the QR code's URL and a
/// 6-digit code to type, both valid for 120 s; five wrong codes end every code on offer.
public actor DeviceRegistry {
    public struct Device: Sendable, Codable, Equatable {
        public var name: String
        /// What it may see and do.
        public var types: Set<DataType>
        /// What its page asked for at pairing beyond what was offered (`devices` shows it; `grant` gives it).
        public var asked: Set<DataType> = []
        public var tokenSHA256: String
        public var created: Date
        public var lastSeen: Date?

        /// What `devices` lists and `revoke` takes beside the name: the first 8 hex digits of the token's SHA-256
        /// (32 bits of a hash of 256 random bits say nothing of the token).
        public var id: String { String(tokenSHA256.prefix(8)) }

        init(name: String, types: Set<DataType>, asked: Set<DataType>, tokenSHA256: String, created: Date) {
            self.name = name
            self.types = types
            self.asked = asked
            self.tokenSHA256 = tokenSHA256
            self.created = created
        }

        private enum CodingKeys: String, CodingKey {
            case name, types, asked, tokenSHA256, created, lastSeen
            /// Before types: `read` or `control`, read as those shorthands (neither gives heart rate).
            case scope
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            tokenSHA256 = try container.decode(String.self, forKey: .tokenSHA256)
            created = try container.decode(Date.self, forKey: .created)
            lastSeen = try container.decodeIfPresent(Date.self, forKey: .lastSeen)
            // A type this version does not know is dropped, not a reason to lose every device.
            func types(_ key: CodingKeys) throws -> Set<DataType> {
                Set((try container.decodeIfPresent([String].self, forKey: key) ?? []).compactMap(DataType.init))
            }
            if container.contains(.types) {
                self.types = try types(.types)
            } else {
                let scope = try container.decodeIfPresent(String.self, forKey: .scope) ?? "read"
                self.types = scope == "control" ? DataType.control : DataType.read
            }
            asked = try types(.asked)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(types.sorted().map(\.rawValue), forKey: .types)
            if !asked.isEmpty { try container.encode(asked.sorted().map(\.rawValue), forKey: .asked) }
            try container.encode(tokenSHA256, forKey: .tokenSHA256)
            try container.encode(created, forKey: .created)
            try container.encodeIfPresent(lastSeen, forKey: .lastSeen)
        }
    }

    /// What `pair` hands out: the one-time token of the URL, the code, and for scripts a device token at once.
    public struct Offer: Sendable {
        public var oneTimeToken: String
        public var code: String
        public var token: String?
    }

    public enum PairingFailure: Error, Sendable, Equatable {
        /// No code or token on offer matches (or it expired).
        case wrong
        /// Five wrong codes: every code on offer is gone.
        case exhausted
    }

    public static let offerSeconds: Double = 120
    public static let wrongCodesAllowed = 5

    private struct Pending {
        var oneTimeToken: String
        var code: String
        var name: String
        var types: Set<DataType>
        var expires: Date
    }

    private let file: URL
    private var devices: [Device]
    private var offers: [Pending] = []
    private var wrongCodes = 0
    private var lastWritten = Date.distantPast
    private let now: @Sendable () -> Date

    /// Reads the paired devices from `file` (none when it does not exist yet).
    public init(file: URL, now: @escaping @Sendable () -> Date = Date.init) throws {
        self.file = file
        self.now = now
        if FileManager.default.fileExists(atPath: file.path) {
            let data = try Data(contentsOf: file)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            devices = try decoder.decode([Device].self, from: data)
        } else {
            devices = []
        }
    }

    public var all: [Device] { devices }

    /// Offers a pairing for a device to be called `name`, granted `types`; with `token`, pairs it at once and
    /// returns its device token (for a script or Home Assistant, which cannot scan a code).
    public func offer(name: String, types: Set<DataType>, token wantsToken: Bool) throws -> Offer {
        let time = now()
        offers.removeAll { $0.expires < time }
        var offer = Offer(oneTimeToken: Self.randomToken(bytes: 16), code: Self.randomCode(), token: nil)
        if wantsToken {
            offer.token = try add(name: name, types: types, asked: [])
            offer.oneTimeToken = ""
            offer.code = ""
        } else {
            offers.append(
                Pending(
                    oneTimeToken: offer.oneTimeToken, code: offer.code, name: name, types: types,
                    expires: time.addingTimeInterval(Self.offerSeconds)))
            wrongCodes = 0
        }
        return offer
    }

    /// Pairs with a code typed on the device; the device's token. `name` overrides the offer's when given; `asking`,
    /// the types the device's page asks for, narrows what the offer grants (and what it asks beyond is noted).
    public func pair(code: String, name: String?, asking: Set<DataType>? = nil) throws -> (
        token: String, device: Device
    ) {
        let time = now()
        offers.removeAll { $0.expires < time }
        guard let index = offers.firstIndex(where: { Self.same($0.code, code) }) else {
            guard !offers.isEmpty else { throw PairingFailure.wrong }
            wrongCodes += 1
            if wrongCodes >= Self.wrongCodesAllowed {
                offers.removeAll()
                throw PairingFailure.exhausted
            }
            throw PairingFailure.wrong
        }
        let offer = offers.remove(at: index)
        let token = try add(
            name: name.flatMap { $0.isEmpty ? nil : $0 } ?? offer.name,
            types: offer.types.intersection(asking ?? offer.types),
            asked: (asking ?? []).subtracting(offer.types))
        return (token, devices[devices.count - 1])
    }

    /// Pairs with the QR code's one-time token.
    public func pair(oneTimeToken: String) throws -> (token: String, device: Device) {
        let time = now()
        offers.removeAll { $0.expires < time }
        guard let index = offers.firstIndex(where: { Self.same($0.oneTimeToken, oneTimeToken) }) else {
            throw PairingFailure.wrong
        }
        let offer = offers.remove(at: index)
        let token = try add(name: offer.name, types: offer.types, asked: [])
        return (token, devices[devices.count - 1])
    }

    /// The device a token belongs to (its last-seen time noted), or nil.
    public func device(token: String) -> Device? {
        let hash = Self.sha256(token)
        guard let index = devices.firstIndex(where: { Self.same($0.tokenSHA256, hash) }) else { return nil }
        devices[index].lastSeen = now()
        // Last-seen times are worth a write once a minute, not once a request.
        if now().timeIntervalSince(lastWritten) > 60 { try? save() }
        return devices[index]
    }

    /// Forgets the devices called `name`, or the one whose id (`Device.id`) it is; their token hashes (their
    /// streams are closed by the caller). The id lets a rider revoke a device whose name, sent by the device at
    /// pairing, holds characters nobody can type.
    public func revoke(name: String) throws -> Set<String> {
        let revoked = Set(devices.filter { $0.name == name || $0.id == name.lowercased() }.map(\.tokenSHA256))
        guard !revoked.isEmpty else { return [] }
        devices.removeAll { revoked.contains($0.tokenSHA256) }
        try save()
        return revoked
    }

    /// Gives and takes types from the devices called `name` (or with that id), without pairing again: the devices
    /// changed, their new grants. What was asked and is now given is no longer asked.
    public func grant(name: String, adding: Set<DataType>, removing: Set<DataType>) throws -> [Device] {
        let indices = devices.indices.filter { devices[$0].name == name || devices[$0].id == name.lowercased() }
        guard !indices.isEmpty else { return [] }
        for index in indices {
            devices[index].types.formUnion(adding)
            devices[index].types.subtract(removing)
            devices[index].asked.subtract(devices[index].types)
        }
        try save()
        return indices.map { devices[$0] }
    }

    private func add(name: String, types: Set<DataType>, asked: Set<DataType>) throws -> String {
        let token = Self.randomToken(bytes: 32)
        var unique = name.isEmpty ? "device" : name
        var suffix = 2
        while devices.contains(where: { $0.name == unique }) {
            unique = "\(name) (\(suffix))"
            suffix += 1
        }
        devices.append(
            Device(name: unique, types: types, asked: asked, tokenSHA256: Self.sha256(token), created: now()))
        try save()
        return token
    }

    /// Writes the file whole (a new file renamed over the old one), readable by the mirror's user only.
    private func save() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let folder = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appendingPathComponent(".\(file.lastPathComponent).\(getpid())")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: try encoder.encode(devices), attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        guard rename(temporary.path, file.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSFilePathErrorKey: file.path, NSLocalizedDescriptionKey: "cannot write \(file.path): \(reason)",
                ])
        }
        lastWritten = now()
    }

    // MARK: Secrets

    /// `bytes` from the system's random source (getrandom), base64url without padding.
    static func randomToken(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func randomCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let number = UInt32.random(in: 0..<1_000_000, using: &generator)
        let digits = String(number)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    static func sha256(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Compares secrets in time that does not depend on where they first differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
