import Concurrency
import XCTest

final class KeptUntilExitTests: XCTestCase {
    private final class Large {}

    /// A kept value outlives every reference its command had; one not kept is freed with the last of them.
    func testAKeptValueIsNeverFreed() {
        weak var kept: Large?
        weak var dropped: Large?
        do {
            let one = Large()
            let other = Large()
            kept = one
            dropped = other
            KeptUntilExit.keep([one])
        }
        XCTAssertNotNil(kept)
        XCTAssertNil(dropped)
    }
}
