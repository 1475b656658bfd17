import BlueZ
import CBluetooth
import Capture
import Foundation
import LiveRecording
import RideJournal
import Synchronization
import Workouts

/// A capture of the kernel's HCI monitor channel (what `btmon` reads) into a btsnoop file with datalink 2001, as
/// `btmon -w` writes it: the same records, the kernel's own time stamps. `HCIPrivacyFilter` decides what is kept:
/// the controllers and the sensors' connections, nothing of other devices. The file is the rider's alone (mode
/// 0600) and is written record by record, so a capture cut short by a crash is read up to the cut.
///
/// Reading the monitor waits in the kernel: it runs on a thread of its own, never on one of the few threads Swift's
/// tasks share, and stops within 0.2 s of being asked.
public final class HCICapture: RideObserver {
    /// Why there is no capture, in a rider's words.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// What a finished capture holds.
    public struct Outcome: Sendable, Equatable {
        public var kept = 0
        /// Records of other devices and of other programs, left out.
        public var leftOut = 0
        /// Why it stopped before it was asked to (a full disk, the monitor closed), or nil.
        public var problem: String?

        public init() {}
    }

    private let path: String
    private let monitor: Int32
    private let file: Int32
    private let adapterIndex: UInt16?
    private let namedSensors: Mutex<Set<String>>
    private let stopping = Atomic<Bool>(false)
    /// Whether `run` took the socket and the file (and closes them itself).
    private let started = Atomic<Bool>(false)
    /// The writer and the file's state, one lock for both: the kernel's records (from the capture's thread) and the
    /// ride's log lines (from the recorder) reach the file whole and in the order they were taken.
    private let output: Mutex<Output>

    private struct Output {
        var writer = BtsnoopWriter(datalink: .linuxMonitor)
        var open = true
        var outcome = Outcome()
    }

    /// Opens the monitor channel and creates `path`. `sensors`: addresses of sensors known before they connect
    /// (more with `addSensor`); `adapterIndex`: one controller's records only.
    public init(path: String, adapterIndex: UInt16? = nil, sensors: [String] = []) throws(Unavailable) {
        let monitor = cbluetooth_monitor_open()
        guard monitor >= 0 else { throw Unavailable(description: Self.explain(monitorError: -monitor)) }
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else {
            let reason = String(cString: strerror(errno))
            close(monitor)
            throw Unavailable(description: "cannot write the capture to \(path): \(reason)")
        }
        self.path = path
        self.monitor = monitor
        self.file = file
        self.adapterIndex = adapterIndex
        namedSensors = Mutex(Set(sensors.map { $0.uppercased() }))
        output = Mutex(Output())
        // The file header, at once: a capture that never gets a record is still a btsnoop file.
        output.withLock { state in
            if !Self.write(state.writer.drain(), to: file) {
                state.open = false
                state.outcome.problem = Self.cannotWrite(path)
            }
        }
    }

    deinit {
        // A capture opened but never run (the ride could not start) closes what it opened.
        if !started.load(ordering: .relaxed) {
            close(monitor)
            close(file)
        }
    }

    /// The kernel's index of the controller named `adapter` (hci1, or its address), from its own list; nil when
    /// it has no such controller.
    public static func adapterIndex(named adapter: String) -> UInt16? {
        guard case .adapters(let adapters) = AdapterFacts.read(),
            let found = adapters.first(where: {
                $0.name == adapter || $0.address.caseInsensitiveCompare(adapter) == .orderedSame
            })
        else { return nil }
        return UInt16(found.name.dropFirst(3))
    }

    static func explain(monitorError code: Int32) -> String {
        switch code {
        case EPERM, EACCES:
            "reading the kernel's Bluetooth traffic needs the CAP_NET_RAW capability. Run as root, or give it to "
                + "cyclelog once with `sudo setcap cap_net_raw+ep \"$(command -v cyclelog)\"`; the service takes it "
                + "from the drop-in cyclelog-capture.conf, installed with the documentation (AmbientCapabilities=CAP_NET_RAW)"
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            "this kernel has no Bluetooth (no Bluetooth controller, or the bluetooth module is not loaded)"
        default:
            "the kernel's Bluetooth monitor cannot be opened: \(String(cString: strerror(code)))"
        }
    }

    /// A sensor the ride is about to connect to: its connection's traffic is kept from now on.
    public func addSensor(_ address: String) {
        _ = namedSensors.withLock { $0.insert(address.uppercased()) }
    }

    /// The ride's journal events as they are written: those that never cross the air (its start, controls and
    /// settings, and what the recorder learnt of each sensor) go into the capture as log lines of
    /// `GATTReplay.rideLogIdent`, so that the capture replays to the ride; the sensors' values are in it already.
    public func note(_ events: [RideEvent]) {
        for event in events {
            if case .notification = event.kind { continue }
            log(GATTReplay.rideLogIdent, Journal.line(event))
        }
    }

    /// A sensor's characteristics as BlueZ found them, before it is subscribed to: their value handles and UUIDs as
    /// a log line of `GATTReplay.handleMapIdent`, so that a replay maps the values of a sensor BlueZ did not
    /// discover again (it keeps what it found for a known device) — written before any notification it maps.
    public func noteCharacteristics(_ characteristics: [GattCharacteristic], of address: String) {
        var handles: [UInt16: UInt16] = [:]
        for characteristic in characteristics {
            guard let handle = characteristic.valueHandle, let uuid = characteristic.shortUUID else { continue }
            handles[handle] = uuid
        }
        guard !handles.isEmpty else { return }
        log(GATTReplay.handleMapIdent, GATTReplay.handleMapLine(address: address, handles))
    }

    private func log(_ ident: String, _ message: String) {
        append { $0.appendLog(ident: ident, message, timeMicroseconds: Self.nowMicroseconds()) }
    }

    private static func nowMicroseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

    /// Asks a running capture to stop; `run` returns within 0.2 s.
    public func stop() { stopping.store(true, ordering: .relaxed) }

    /// Captures until stopped or cancelled, then closes the file. Once per capture.
    public func run() async -> Outcome {
        guard !started.exchange(true, ordering: .relaxed) else { return output.withLock { $0.outcome } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Outcome, Never>) in
                let thread = Thread { [self] in
                    copyRecords()
                    close(monitor)
                    let outcome = output.withLock { state in
                        state.open = false
                        return state.outcome
                    }
                    close(file)
                    done.resume(returning: outcome)
                }
                thread.name = "HCI capture"
                thread.start()
            }
        } onCancel: {
            stop()
        }
    }

    private func copyRecords() {
        var filter = HCIPrivacyFilter(
            adapterIndex: adapterIndex, sensorServices: Set(LiveRecorder.services),
            isNamedSensor: { [self] address in namedSensors.withLock { $0.contains(address) } },
            connectionAddress: { index, handle in
                var octets = [UInt8](repeating: 0, count: 6)
                guard cbluetooth_connection_address(index, handle, &octets) == 1 else { return nil }
                return Btsnoop.address(leastSignificantFirst: octets[...])
            })
        // The largest record: an ACL fragment of 65 535 octets and its 4-octet header.
        var buffer = [UInt8](repeating: 0, count: 65_540)
        while !stopping.load(ordering: .relaxed) {
            var record = cbluetooth_monitor_record()
            let got = buffer.withUnsafeMutableBufferPointer {
                cbluetooth_monitor_read(monitor, $0.baseAddress, Int32($0.count), 200, &record)
            }
            if got < 0 {
                let reason = String(cString: strerror(-got))
                output.withLock { $0.outcome.problem = "the kernel's Bluetooth monitor stopped: \(reason)" }
                return
            }
            guard got == 1 else { continue }
            let packet = buffer[0..<Int(record.length)]
            guard filter.keeps(opcode: record.opcode, index: record.index, packet) else {
                output.withLock { $0.outcome.leftOut += 1 }
                continue
            }
            append {
                $0.appendMonitor(
                    opcode: record.opcode, index: record.index, timeMicroseconds: record.unix_microseconds, packet)
            }
            if output.withLock({ !$0.open }) { return }
        }
    }

    /// One record into the file, whole; after a failed write (a full disk) the capture keeps nothing more.
    private func append(_ record: (inout BtsnoopWriter) -> Void) {
        output.withLock { state in
            guard state.open else { return }
            record(&state.writer)
            if Self.write(state.writer.drain(), to: file) {
                state.outcome.kept += 1
            } else {
                state.open = false
                state.outcome.problem = Self.cannotWrite(path)
            }
        }
    }

    private static func cannotWrite(_ path: String) -> String {
        "the capture stopped: \(path) cannot take more (\(String(cString: strerror(errno))))"
    }

    /// Writes all of `bytes`; false when the file cannot take them (errno says why).
    private static func write(_ bytes: [UInt8], to file: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(file, $0.baseAddress! + written, bytes.count - written) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }
}
