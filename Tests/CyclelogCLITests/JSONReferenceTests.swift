import Foundation
import TestSupport
import Testing

/// Docs/reference/json.md against what `cyclelog` prints for a real ride: every key, in order, and nothing else.
@Suite struct JSONReferenceTests {
    /// The keys each table of the page names (the backquoted names in its first column), by section.
    static func documentedKeys() throws -> (ride: [String], list: [String]) {
        let page = try String(
            contentsOf: fixturesFolder.deletingLastPathComponent().appendingPathComponent("Docs/reference/json.md"),
            encoding: .utf8)
        let sections = page.components(separatedBy: "\n## ")
        func keys(_ heading: String) throws -> [String] {
            let section = try #require(sections.first { $0.hasPrefix(heading) }, "no section \(heading)")
            let name = try NSRegularExpression(pattern: "`([A-Za-z]+)`")
            return section.split(separator: "\n").filter { $0.hasPrefix("| `") }.flatMap { row -> [String] in
                let cell = String(row.dropFirst(2).prefix { $0 != "|" })
                return name.matches(in: cell, range: NSRange(cell.startIndex..., in: cell)).compactMap {
                    Range($0.range(at: 1), in: cell).map { String(cell[$0]) }
                }
            }
        }
        return (try keys("A ride"), try keys("The list"))
    }

    /// The keys of a JSON object in the order the text has them (JSONSerialization forgets the order).
    static func orderedKeys(_ json: String, of object: String? = nil) -> [String] {
        var keys: [String] = []
        var depth = 0
        var inString = false
        var escaped = false
        var current = ""
        var wanted = object == nil ? 1 : -1
        var lastKey = ""
        var iterator = json.makeIterator()
        while let character = iterator.next() {
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                } else {
                    current.append(character)
                }
                continue
            }
            switch character {
            case "\"":
                inString = true
                current = ""
            case ":":
                if depth == wanted { keys.append(current) }
                lastKey = current
            case "{", "[":
                depth += 1
                if let object, wanted < 0, lastKey == object, character == "{" || character == "[" {
                    // The first object inside `object` (an array of objects, or the object itself).
                    wanted = character == "[" ? depth + 1 : depth
                }
            case "}", "]":
                // The object asked for ends here.
                if depth == wanted, !keys.isEmpty { return keys }
                depth -= 1
            default: break
            }
        }
        return keys
    }

    @Test func theReferenceListsEveryKeyOfShowAndListInOrder() async throws {
        let (ride, list) = try Self.documentedKeys()
        let db = try temporaryDatabase()
        let file = fixturesFolder.appendingPathComponent("rides/sweatpy_4078723797.journal").path
        let replayed = try await offThePool { try cyclelog(["replay", "--json", "--db", db, file]) }
        #expect(replayed.status == 0, "\(replayed.errorOutput)")
        let shown = try await offThePool { try cyclelog(["show", "last", "--json", "--db", db]) }
        // `damagedParts` is there only for a damaged ride.
        #expect(ride.last == "damagedParts")
        #expect(Self.orderedKeys(shown.output) == Array(ride.dropLast()))
        #expect(Self.orderedKeys(replayed.output) == Array(ride.dropLast()))
        // Each lap: its number and place, then the ride's statistics from elapsedSeconds to powerCurveWatts.
        let from = try #require(ride.firstIndex(of: "elapsedSeconds"))
        let to = try #require(ride.firstIndex(of: "powerCurveWatts"))
        #expect(
            Self.orderedKeys(shown.output, of: "laps") == ["number", "start", "startOffsetSeconds"] + ride[from...to])
        let listed = try await offThePool { try cyclelog(["list", "--json", "--db", db]) }
        #expect(Self.orderedKeys(listed.output, of: nil).isEmpty)  // an array, not an object
        let first = String(listed.output.drop { $0 != "{" })
        #expect(Self.orderedKeys(first) == list)
    }
}
