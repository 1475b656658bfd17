import Formats
import XCTest

/// The byte-level test for control characters agrees with the escape rule, scalar by scalar.
final class ShownTextTests: XCTestCase {
    func testNeedsEscapesIsTrueExactlyForTheScalarsThatAreEscaped() {
        for value in UInt32(0)...0x7FF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a" + String(Character(scalar)) + "b"
            for keepingLayout in [false, true] {
                let kept = keepingLayout && (scalar == "\n" || scalar == "\t")
                XCTAssertEqual(
                    ShownText.needsEscapes(text.utf8, keepingLayout: keepingLayout),
                    ShownText.escape(scalar) != nil && !kept, "U+\(String(value, radix: 16)), \(keepingLayout)")
            }
        }
        // 0xC2 followed by a byte outside 0x80-0x9F is an ordinary character (a no-break space, a pound sign).
        XCTAssertFalse(ShownText.needsEscapes("\u{A0}£".utf8))
        XCTAssertEqual(ShownText.visible("\u{1B}[2J\u{85}ok"), "\\x1B[2J\\u0085ok")
    }

    /// `list` and `show` print whole lines with their layout kept; a ride named with DEL still shows it escaped,
    /// as the README says of every control character but newline and tab.
    func testDeleteIsEscapedEvenWhereTheLayoutIsKept() {
        XCTAssertEqual(ShownText.visible("7  ride\u{7F}\tnow\n", keepingLayout: true), "7  ride\\x7F\tnow\n")
        XCTAssertTrue(ShownText.needsEscapes("ride\u{7F}".utf8, keepingLayout: true))
    }
}
