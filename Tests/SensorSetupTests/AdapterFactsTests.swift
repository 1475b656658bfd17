import CBluetooth
import XCTest

@testable import SensorSetup

/// The kernel's structures read as the Core specification lays them out.
final class AdapterFactsTests: XCTestCase {
    func testTheKernelsFactsReadAsTheSpecificationSays() {
        var raw = cbluetooth_adapter()
        raw.name = (0x68, 0x63, 0x69, 0x31, 0, 0, 0, 0, 0)  // "hci1"
        // A device address travels least significant byte first (Core Vol 2 Part E 5.2): 5C:F3:70:A1:B2:C3.
        raw.address = (0xC3, 0xB2, 0xA1, 0x70, 0xF3, 0x5C)
        raw.bus = 1  // HCI_USB
        raw.flags = 1 << UInt32(cbluetooth_flag_up)
        // LMP feature bit 38, "LE Supported (Controller)": byte 4, bit 6 (Core Vol 2 Part C 3.3).
        raw.features = (0, 0, 0, 0, 0x40, 0, 0, 0)
        raw.le_links = 3
        raw.classic_links = 1
        raw.version_read = 1
        raw.hci_version = 9  // Bluetooth Core 5.0 (Assigned Numbers, 2.1)
        raw.hci_revision = 0x0100
        raw.manufacturer = 2  // Company identifier 0x0002: Intel Corp.
        let facts = AdapterFacts(raw)
        XCTAssertEqual(facts.name, "hci1")
        XCTAssertEqual(facts.address, "5C:F3:70:A1:B2:C3")
        XCTAssertEqual(facts.bus, "USB")
        XCTAssertTrue(facts.isUp)
        XCTAssertTrue(facts.supportsLE)
        XCTAssertEqual(facts.leLinks, 3)
        XCTAssertEqual(facts.classicLinks, 1)
        XCTAssertEqual(facts.hciVersion, "5.0")
        XCTAssertEqual(facts.hciRevision, 256)
        XCTAssertEqual(facts.manufacturerID, 2)
        XCTAssertEqual(facts.manufacturer, "Intel Corp.")
        XCTAssertEqual(
            facts.summary, "hci1: 5C:F3:70:A1:B2:C3, USB, up, LE, 3 LE links open, Bluetooth 5.0, Intel Corp.")

        // A controller that is down, without LE, whose links and version the kernel did not give.
        raw.flags = 0
        raw.features = (0xFF, 0xFF, 0xFF, 0xFF, 0xBF, 0xFF, 0xFF, 0xFF)
        raw.bus = 0  // HCI_VIRTUAL
        raw.le_links = -1
        raw.classic_links = -1
        raw.version_read = 0
        let down = AdapterFacts(raw)
        XCTAssertFalse(down.isUp)
        XCTAssertFalse(down.supportsLE)
        XCTAssertEqual(down.bus, "virtual")
        XCTAssertNil(down.leLinks)
        XCTAssertNil(down.hciVersion)
        XCTAssertNil(down.manufacturer)
    }
}
