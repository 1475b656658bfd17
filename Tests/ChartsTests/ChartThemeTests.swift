import Charts
import Foundation
import RideTestSupport
import TestSupport
import WorkoutStore
import XCTest

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The history page's pictures: dark on the dark page, readable on a phone, markers drawn.
final class ChartThemeTests: XCTestCase {
    /// A ride of 30 minutes of power with a marker 10 minutes in, stored and read back.
    func storedRide() throws -> WorkoutStore.StoredRide {
        var journal = Journals.power(Array(repeating: 200, count: 1800), day: 3).split(separator: "\n").map(String.init)
        // The marker's line goes in time order: after the 600th notification (line 3 is the first).
        journal.insert("2024-01-03T06:10:00.700000Z marker flat tyre & a gel", at: 3 + 600)
        return try StoredRides.ride(journal: journal.joined(separator: "\n") + "\n")
    }

    /// WCAG 2.x contrast ratio of two `#rrggbb` colours.
    func contrast(_ a: String, _ b: String) -> Double {
        func luminance(_ hex: String) -> Double {
            let value = Int(hex.dropFirst(), radix: 16) ?? 0
            let channels = [value >> 16 & 0xff, value >> 8 & 0xff, value & 0xff].map { Double($0) / 255 }
            let linear = channels.map { $0 <= 0.03928 ? $0 / 12.92 : pow(($0 + 0.055) / 1.055, 2.4) }
            return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
        }
        let (x, y) = (luminance(a), luminance(b))
        return (max(x, y) + 0.05) / (min(x, y) + 0.05)
    }

    func attributes(_ name: String, in svg: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "\(name)=\"(#[0-9a-fA-F]{6})\"")
        return pattern.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)).map {
            String(svg[Range($0.range(at: 1), in: svg)!])
        }
    }

    func testTheDarkPicturesReadOnTheDarkPage() throws {
        let ride = try storedRide()
        let dark = RideChart.svg(ride.summary, samples: ride.samples, theme: .dark)
        let background = "#181c22"
        XCTAssertTrue(dark.contains("<rect width=\"100%\" height=\"100%\" fill=\"\(background)\"/>"))
        XCTAssertFalse(dark.contains("white"))
        // Every text is legible on the background (WCAG AA for text: 4.5:1); the light picture's on white too.
        let texts = dark.components(separatedBy: "<text").dropFirst().map { "<text" + $0 }
        XCTAssertFalse(texts.isEmpty)
        for colour in Set(attributes("fill", in: texts.joined())) {
            XCTAssertGreaterThanOrEqual(contrast(colour, background), 4.5, "text in \(colour) on the dark page")
        }
        let light = RideChart.svg(ride.summary, samples: ride.samples)
        let lightTexts = light.components(separatedBy: "<text").dropFirst().joined()
        for colour in Set(attributes("fill", in: lightTexts)) {
            XCTAssertGreaterThanOrEqual(contrast(colour, "#ffffff"), 4.5, "text in \(colour) on white")
        }
        // The series keep their hues, lighter: power stays red, and reads on the dark page.
        XCTAssertTrue(dark.contains("stroke=\"#ff5a5f\""))
        XCTAssertGreaterThanOrEqual(contrast("#ff5a5f", background), 3, "a line against its background")
    }

    func testMarkersAreDrawnWithTheirText() throws {
        let ride = try storedRide()
        let svg = RideChart.svg(ride.summary, samples: ride.samples)
        // 600.7 s into the ride: one dotted line per panel (one panel: power), the text escaped, once.
        XCTAssertEqual(svg.components(separatedBy: "stroke-dasharray=\"1.5 3\"").count - 1, 1)
        XCTAssertEqual(svg.components(separatedBy: ">flat tyre &amp; a gel</text>").count - 1, 1, svg)
        XCTAssertTrue(XMLParser(data: Data(svg.utf8)).parse())
        // A zoom that leaves the marker out leaves its line out.
        let zoomed = RideChart.svg(ride.summary, samples: ride.samples, seconds: 700..<1000)
        XCTAssertFalse(zoomed.contains("flat tyre"))
    }

    func testOnAPhoneThePictureIsDrawnAtItsWidth() throws {
        let ride = try storedRide()
        let phone = RideChart.svg(ride.summary, samples: ride.samples, widthPixels: 400)
        XCTAssertTrue(phone.contains("width=\"400\""))
        XCTAssertTrue(phone.contains("viewBox=\"0 0 400 "))
        // Drawn at the screen's width, every text is at least 10 pixels high there.
        let sizes = phone.components(separatedBy: "font-size=\"").dropFirst().compactMap {
            Double($0.prefix { $0 != "\"" })
        }
        XCTAssertGreaterThanOrEqual(sizes.min() ?? 0, 10)
        // Time labels at least 80 pixels apart: a 30-minute ride on 346 pixels of plot has at most 4.
        let ticks = phone.components(separatedBy: "text-anchor=\"middle\"").count - 1
        XCTAssertLessThanOrEqual(ticks, 4)
        XCTAssertGreaterThanOrEqual(ticks, 2)
        // Widths from the network are held to what a screen has.
        XCTAssertTrue(
            RideChart.svg(ride.summary, samples: ride.samples, widthPixels: Int.max).contains("width=\"2400\""))
        XCTAssertTrue(RideChart.svg(ride.summary, samples: ride.samples, widthPixels: -5).contains("width=\"320\""))
    }
}
