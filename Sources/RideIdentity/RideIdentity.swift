import Crypto
import Formats
import RideJournal
import Workouts

/// A ride's two digests, fed event by event (a live ride keeps the digests, not its events): SHA-256 over its
/// journal's text, exactly the bytes `cyclelog show ID --journal` prints — the header line, then each event's line,
/// every line ending in a newline — once with every event (the content digest) and once without the settings
/// (the source digest). Each event's line is made once and feeds both. Anyone can recompute the content digest
/// (`cyclelog show 3 --journal | sha256sum`, PostgreSQL's `sha256()`).
public struct RideDigests: Sendable {
    private var content = SHA256()
    /// Nil until the first setting: until then both digests have taken the same lines, and `content` stands for
    /// both (a journal without settings, most of them, is hashed once).
    private var source: SHA256?
    /// Lines both digests have yet to take: hashed 64 kB at a time rather than line by line.
    private var pending: [UInt8] = []
    private var times = UTCTime.Writer()
    private static let batchBytes = 65_536

    public init() {
        pending += Journal.header.utf8
        pending.append(UInt8(ascii: "\n"))
    }

    /// (A concrete list: a generic sequence is not specialised across modules.)
    public init(_ events: [RideEvent]) {
        self.init()
        for event in events { add(event) }
    }

    public mutating func add(_ event: RideEvent) {
        if case .setting = event.kind {
            // Only the content digest takes a setting (rare: at the head of a replay's journal), after the lines
            // before it.
            flush()
            if source == nil { source = content }
            var line: [UInt8] = []
            Journal.write(event, into: &line, times: &times)
            line.append(UInt8(ascii: "\n"))
            content.update(data: line)
            return
        }
        Journal.write(event, into: &pending, times: &times)
        pending.append(UInt8(ascii: "\n"))
        if pending.count >= Self.batchBytes { flush() }
    }

    private mutating func flush() {
        content.update(data: pending)
        source?.update(data: pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// Of every event, lowercase hex, 64 digits.
    public var contentHex: String { Self.hex(content, pending) }
    /// Of the events without settings (`wheel *`, `auto-pause`), lowercase hex, 64 digits.
    public var sourceHex: String { Self.hex(source ?? content, pending) }

    private static func hex(_ hash: SHA256, _ pending: [UInt8]) -> String {
        var hash = hash
        hash.update(data: pending)
        return RideIdentity.hex(hash.finalize())
    }
}

/// How a ride is named across databases and machines (Docs/reference/identity.md, "A ride's identity").
///
/// - Its `syncIdentifier`: a live ride's is a random UUID written into its journal's `start` line; a ride from a
///   file that carries none is named by its `sourceDigest` (`RideDigests.sourceHex` of the file's events: without
///   the settings (`wheel *`, `auto-pause`), so the same file gives the same ride whatever options it is replayed with).
/// - Its `contentDigest`: `RideDigests.contentHex` of the version stored, settings included; a changed option gives a
///   new content and so the next version of the same ride.
public enum RideIdentity {
    /// What the digests stored with a workout were computed by: 2 is SHA-256 over the journal text (this file).
    /// Version 1 (two FNV-1a hashes over the events) is only found in databases not yet updated.
    public static let digestVersion = 2

    /// SHA-256 of bytes (an imported file, the text naming a FIT activity), lowercase hex.
    public static func digest(bytes: some Sequence<UInt8>) -> String {
        var hash = SHA256()
        hash.update(data: Array(bytes))
        return hex(hash.finalize())
    }

    /// A sync identifier made from a digest: its first 128 bits as a UUID of version 8 ("custom", RFC 9562) with
    /// the version and variant bits set, lowercase.
    public static func syncIdentifier(digest: String) -> String {
        var digits = Array(digest.prefix(32))
        precondition(digits.count == 32, "a digest has at least 32 hex digits")
        digits[12] = "8"
        let variant = Int(String(digits[16]), radix: 16) ?? 0
        digits[16] = Array("89ab")[variant & 3]
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }
        return parts.joined(separator: "-")
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(64)
        for byte in digest {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
