import Workouts
import XCTest

/// Tyre sizes to circumferences: ISO 5775 geometry, π × (bead seat diameter + 2 × width).
final class WheelSizeTests: XCTestCase {
    func testTheNotationsRidersUse() {
        // 700C rims have a 622 mm bead seat: π × (622 + 2 × 25) = 2111.15 mm.
        XCTAssertEqual(WheelSize.circumferenceMillimetres("700x25c"), 2111)
        XCTAssertEqual(WheelSize.circumferenceMillimetres("700 x 25C"), 2111)
        XCTAssertEqual(WheelSize.circumferenceMillimetres("25-622"), 2111)
        XCTAssertEqual(WheelSize.circumferenceMillimetres("700×25"), 2111)
        // 650B: 584 mm; π × (584 + 94) = 2130.0.
        XCTAssertEqual(WheelSize.circumferenceMillimetres("650bx47"), 2130)
        XCTAssertEqual(WheelSize.circumferenceMillimetres("650x47b"), 2130)
        // 650C: 571 mm; π × (571 + 46) = 1938.4.
        XCTAssertEqual(WheelSize.circumferenceMillimetres("650x23c"), 1938)
        // Inches: 29 × 2.2 is 622 mm and 55.88 mm: π × 733.76 = 2305.2.
        XCTAssertEqual(WheelSize.circumferenceMillimetres("29x2.2"), 2305)
        // 26 × 2.1: 559 mm and 53.34 mm: π × 665.68 = 2091.3.
        XCTAssertEqual(WheelSize.circumferenceMillimetres("26x2.1"), 2091)
        XCTAssertEqual(WheelSize.circumferenceMillimetres("2105"), 2105)
    }

    func testWithinHalfAPercentOfPublishedCharts() {
        // The circumference tables bike computers print (a loaded tyre, measured): 700x23C 2096, 700x25C 2105,
        // 700x28C 2136, 700x32C 2155.
        for (size, chart) in [("700x23c", 2096.0), ("700x25c", 2105), ("700x28c", 2136), ("700x32c", 2155)] {
            let estimate = Double(WheelSize.circumferenceMillimetres(size) ?? 0)
            XCTAssertEqual(estimate, chart, accuracy: chart * 0.005, size)
        }
    }

    func testWhatIsNotASizeIsRefused() {
        for text in ["", "650x23", "700x", "x25", "banana", "99", "9000", "700x300c", "12-622", "25-100"] {
            XCTAssertNil(WheelSize.circumferenceMillimetres(text), text)
        }
    }
}
