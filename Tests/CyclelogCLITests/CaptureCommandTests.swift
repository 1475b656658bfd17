import Foundation
import TestSupport
import WorkoutStore
import XCTest

/// `record --capture` and `capture` where the kernel's Bluetooth monitor cannot be read: without CAP_NET_RAW
/// (dropped with setpriv even for root), or on a kernel without Bluetooth (containers, most CI machines). The
/// capture itself, against btmon, is proven in `make test-vm`.
final class CaptureCommandTests: XCTestCase {
    /// Runs the binary without CAP_NET_RAW, whoever runs the tests.
    static let withoutRawSockets = ["/usr/bin/setpriv", "--bounding-set", "-net_raw", "--inh-caps", "-net_raw"]

    /// What the kernel will say, asked independently: whether it has Bluetooth sockets at all.
    static var kernelHasBluetooth: Bool {
        let probe = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue), 1 /* BTPROTO_HCI */)
        guard probe >= 0 else { return false }
        close(probe)
        return true
    }

    /// The words for this machine: how to get the capability, or that there is no Bluetooth.
    static var expectedReason: String {
        kernelHasBluetooth ? "needs the CAP_NET_RAW capability" : "this kernel has no Bluetooth"
    }

    func testARideIsRecordedWithoutTheCaptureAndSaysWhy() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("captured.sqlite").path
        let capture = standIn.bus.folder.appendingPathComponent("ride.btsnoop").path
        let startTime = Date().timeIntervalSince1970
        let record = try Cyclelog(
            ["record", "--plain", "--sensor", "Stages Power L", "--db", database, "--capture", capture],
            standIn: standIn, prefix: Self.withoutRawSockets)
        try await waitFor("8 power notifications", record) {
            try standIn.sent().filter { $0.time > startTime }.count >= 8
        }
        try await rideOn(standIn, record, notifications: 4)
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
        XCTAssertTrue(record.output.contains("cyclelog: no capture: "), record.output)
        XCTAssertTrue(record.output.contains(Self.expectedReason), record.output)
        XCTAssertTrue(record.output.contains("The ride is recorded without one."), record.output)
        if Self.kernelHasBluetooth {
            XCTAssertTrue(record.output.contains("setcap cap_net_raw+ep"), record.output)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: capture), "no empty capture is left behind")

        // The ride itself: saved whole, every notification sent while it ran.
        let store = try WorkoutStore(path: database)
        XCTAssertEqual(try store.list().map(\.status), [.complete])
        let stored = powerValues(try store.journal(1))
        let sent = try standIn.sent().filter { $0.time > startTime }.map(\.value)
        XCTAssertGreaterThanOrEqual(stored.count, 8)
        XCTAssertEqual(stored, Array(sent.prefix(stored.count)))
    }

    func testCaptureAloneExitsWithTheReason() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("sensor.btsnoop").path
        let run = try cyclelog(["capture", file, "--seconds", "1"], prefix: Self.withoutRawSockets)
        XCTAssertEqual(run.status, 2, run.errorOutput)
        XCTAssertTrue(run.errorOutput.hasPrefix("cyclelog: cannot capture: "), run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains(Self.expectedReason), run.errorOutput)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file))

        let unknown = try cyclelog(["capture", file, "--adapter", "hci9"])
        XCTAssertEqual(unknown.status, 2, unknown.errorOutput)
        XCTAssertTrue(
            unknown.errorOutput.contains("the kernel has no Bluetooth adapter 'hci9'; `cyclelog doctor` lists them"),
            unknown.errorOutput)
        let negative = try cyclelog(["capture", file, "--seconds", "0"])
        XCTAssertEqual(negative.status, 64, negative.errorOutput)
        XCTAssertTrue(negative.errorOutput.contains("--seconds takes a positive number of seconds"))
    }
}
