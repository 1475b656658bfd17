import Foundation
import RideIdentity
import RideJournal
import Testing
import Workouts

/// A ride's digests and identifiers against their definitions: SHA-256 (FIPS 180-4's test vector, and coreutils'
/// `sha256sum` over the journal text) and RFC 9562's version 8 UUID layout.
@Suite struct RideDigestsTests {
    /// `sha256sum` of `text`, as anyone recomputes a content digest (`cyclelog show ID --journal | sha256sum`).
    static func sha256sum(_ text: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: answer, as: UTF8.self).prefix { $0 != " " }.description
    }

    /// A ride's events: a start, a wheel setting, and `count` power notifications a quarter second apart.
    static func events(count: Int) -> [RideEvent] {
        let start: Int64 = 1_714_550_400_000_000
        var events = [
            RideEvent(timeMicroseconds: start, .control(.start(WorkoutPlan(name: "Digest ride")))),
            RideEvent(timeMicroseconds: start, .setting(.defaultWheelCircumference(millimetres: 2096))),
        ]
        for index in 0..<count {
            events.append(
                RideEvent(
                    timeMicroseconds: start + Int64(index) * 250_000,
                    .notification(
                        sensor: "C0:11:22:33:44:55", characteristic: 0x2A63,
                        value: [0x00, 0x00, UInt8(index % 250), 0x00])))
        }
        events.append(RideEvent(timeMicroseconds: start + Int64(count) * 250_000, .control(.end)))
        return events
    }

    @Test func theDigestOfBytesIsSHA256() {
        // FIPS 180-4, appendix B.1 ("abc").
        #expect(
            RideIdentity.digest(bytes: Array("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func aSyncIdentifierIsAVersion8UUIDOfTheDigestsFirst128Bits() {
        let identifier = RideIdentity.syncIdentifier(
            digest: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // Version nibble 8, variant bits 10 (RFC 9562 §4.1, §4.2); the other 122 bits are the digest's.
        #expect(identifier == "ba7816bf-8f01-8fea-8141-40de5dae2223")
        #expect(UUID(uuidString: identifier) != nil)
    }

    /// Fed event by event, across the 64-kB batches, the digests are sha256sum of the journal's text: with every
    /// event (content), and without the setting lines (source).
    @Test(arguments: [3, 5_000])
    func theDigestsAreSHA256OfTheJournalText(count: Int) throws {
        let events = Self.events(count: count)
        let digests = RideDigests(events)
        let text = Journal.text(events)
        #expect(digests.contentHex == (try Self.sha256sum(text)))
        let withoutSettings = Journal.text(events.filter { if case .setting = $0.kind { false } else { true } })
        #expect(digests.sourceHex == (try Self.sha256sum(withoutSettings)))
        #expect(digests.sourceHex != digests.contentHex)
    }
}
