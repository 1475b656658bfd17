import BlueZ
import LiveRecording
import XCTest

/// `--adapter`: by name or address, the first one without it, and a clear error naming what exists.
final class AdapterChoiceTests: XCTestCase {
    let adapters = [
        BluetoothAdapter(
            path: "/org/bluez/hci0", address: "00:AA:01:00:00:00", name: "laptop", powered: true,
            discovering: false),
        BluetoothAdapter(
            path: "/org/bluez/hci1", address: "5C:F3:70:A1:B2:C3", name: "dongle", powered: false,
            discovering: false),
    ]

    func testAnAdapterIsChosenByNameOrAddressElseTheFirst() throws {
        XCTAssertEqual(try LiveRecorder.chooseAdapter(adapters, named: nil).path, "/org/bluez/hci0")
        XCTAssertEqual(try LiveRecorder.chooseAdapter(adapters, named: "hci1").path, "/org/bluez/hci1")
        XCTAssertEqual(try LiveRecorder.chooseAdapter(adapters, named: "5c:f3:70:a1:b2:c3").path, "/org/bluez/hci1")
    }

    func testAnUnknownAdapterOrNoneIsExplained() {
        XCTAssertThrowsError(try LiveRecorder.chooseAdapter(adapters, named: "hci7")) { error in
            XCTAssertEqual(
                "\(error)", "no Bluetooth adapter hci7: BlueZ has hci0 (00:AA:01:00:00:00), hci1 (5C:F3:70:A1:B2:C3)")
        }
        XCTAssertThrowsError(try LiveRecorder.chooseAdapter([], named: nil)) { error in
            XCTAssertTrue("\(error)".hasPrefix("no Bluetooth adapter: BlueZ sees none"))
        }
    }
}
