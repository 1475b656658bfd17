import Export
import Foundation
import RideTestSupport
import TestSupport
import Testing
import WorkoutStore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A ride of 10 minutes at 200 W as the files other programs read, checked against physics (the work is 200 W for
/// 600 s, 120 kJ) and against the FIT protocol's own layout and checksums, not against a second run of ours.
@Suite struct ExportTests {
    static func ride() throws -> WorkoutStore.StoredRide {
        try StoredRides.ride(journal: Journals.power(Array(repeating: 200, count: 600)))
    }

    /// A row per second; the power cells add up to the work done.
    @Test func theCSVHasARowPerSecondAndItsPowerIsTheWork() throws {
        let ride = try Self.ride()
        let lines = CSVTable.encode(ride.summary, samples: ride.samples).split(separator: "\n")
        #expect(lines.first.map(String.init) == CSVTable.header)
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.count == ride.samples.count)
        #expect(rows.allSatisfy { $0.count == 8 })
        let joules = rows.compactMap { Double($0[3]) }.reduce(0, +)
        #expect(abs(joules - 120_000) <= 200, "one second's power at most at the ride's edges")
    }

    /// Well-formed XML whose trackpoints carry the power, and whose lap lasts the ride (06:00:00.5 to 06:10:01.5).
    @Test func theTCXTrackHasThePowerAndTheLapTheTime() throws {
        let ride = try Self.ride()
        let xml = TCXDocument.encode(ride.summary, samples: ride.samples)
        let reader = ElementTexts()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = reader
        parser.shouldProcessNamespaces = true
        #expect(parser.parse())
        let watts = reader.texts["Watts", default: []].compactMap(Double.init)
        #expect(abs(watts.reduce(0, +) - 120_000) <= 200)
        let time = try #require(reader.texts["TotalTimeSeconds"]?.first.flatMap(Double.init))
        #expect(abs(time - 601) <= 1)
    }

    /// The FIT file's header (14 bytes: size, protocol, profile, data size, ".FIT", header CRC) and its closing
    /// CRC, as the FIT protocol lays them out, with the protocol's CRC-16 written here from its description.
    @Test func theFITFileHasItsHeaderDataSizeAndChecksums() throws {
        let ride = try Self.ride()
        let bytes = FITActivity.encode(ride.summary, samples: ride.samples)
        #expect(bytes[0] == 14)
        let dataSize = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        #expect(dataSize == bytes.count - 14 - 2)
        #expect(Array(bytes[8..<12]) == Array(".FIT".utf8))
        let headerCRC = UInt16(bytes[12]) | UInt16(bytes[13]) << 8
        #expect(headerCRC == Self.fitCRC(bytes[0..<12]))
        let fileCRC = UInt16(bytes[bytes.count - 2]) | UInt16(bytes[bytes.count - 1]) << 8
        #expect(fileCRC == Self.fitCRC(bytes[0..<(bytes.count - 2)]))
    }

    /// The FIT protocol's CRC-16 (polynomial 0xA001, reflected), one nibble at a time.
    static func fitCRC(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        let table: [UInt16] = [
            0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
            0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400,
        ]
        var crc: UInt16 = 0
        for byte in bytes {
            for nibble in [UInt16(byte & 0x0F), UInt16(byte >> 4)] {
                let low = table[Int(crc & 0x0F)]
                crc = (crc >> 4) & 0x0FFF
                crc = crc ^ low ^ table[Int(nibble)]
            }
        }
        return crc
    }
}

/// The text of every element, by name.
final class ElementTexts: NSObject, XMLParserDelegate {
    var texts: [String: [String]] = [:]
    private var text = ""

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        texts[name, default: []].append(text.trimmingCharacters(in: .whitespacesAndNewlines))
        text = ""
    }
}
