import Crypto
import Foundation

/// The screens paired with the mirror, and the pairings on offer.
///
/// A device's token is 256 bits from the system's random source, handed to the device once; only its SHA-256 is
/// kept, with the device's name, scope, when it was paired and when it was last seen, in a file only the mirror's
/// user can read. A pairing is offered by `cyclelog-mirror pair`: a one-time token for the QR code's URL and a
/// 6-digit code to type, both valid for 120 s; five wrong codes end every code on offer.
public actor DeviceRegistry {
    public enum Scope: String, Sendable, Codable, CaseIterable {
        /// Sees the ride.
        case read
        /// Sees and controls it.
        case control
    }

    public struct Device: Sendable, Codable, Equatable {
        public var name: String
        public var scope: Scope
        public var tokenSHA256: String
        public var created: Date
        public var lastSeen: Date?

        /// What `devices` lists and `revoke` takes beside the name: the first 8 hex digits of the token's SHA-256
        /// (32 bits of a hash of 256 random bits say nothing of the token).
        public var id: String { String(tokenSHA256.prefix(8)) }
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
        var scope: Scope
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

    /// Offers a pairing for a device to be called `name` with `scope`; with `token`, pairs it at once and returns
    /// its device token (for a script or Home Assistant, which cannot scan a code).
    public func offer(name: String, scope: Scope, token wantsToken: Bool) throws -> Offer {
        let time = now()
        offers.removeAll { $0.expires < time }
        var offer = Offer(oneTimeToken: Self.randomToken(bytes: 16), code: Self.randomCode(), token: nil)
        if wantsToken {
            offer.token = try add(name: name, scope: scope)
            offer.oneTimeToken = ""
            offer.code = ""
        } else {
            offers.append(
                Pending(
                    oneTimeToken: offer.oneTimeToken, code: offer.code, name: name, scope: scope,
                    expires: time.addingTimeInterval(Self.offerSeconds)))
            wrongCodes = 0
        }
        return offer
    }

    /// Pairs with a code typed on the device; the device's token. `name` overrides the offer's when given.
    public func pair(code: String, name: String?) throws -> (token: String, device: Device) {
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
        let token = try add(name: name.flatMap { $0.isEmpty ? nil : $0 } ?? offer.name, scope: offer.scope)
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
        let token = try add(name: offer.name, scope: offer.scope)
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

    private func add(name: String, scope: Scope) throws -> String {
        let token = Self.randomToken(bytes: 32)
        var unique = name.isEmpty ? "device" : name
        var suffix = 2
        while devices.contains(where: { $0.name == unique }) {
            unique = "\(name) (\(suffix))"
            suffix += 1
        }
        devices.append(
            Device(name: unique, scope: scope, tokenSHA256: Self.sha256(token), created: now(), lastSeen: nil))
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
