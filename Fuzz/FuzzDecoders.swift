// libFuzzer entry point, compiled into the CyclingSensors module by Fuzz/run.sh (swiftc -sanitize=fuzzer).
// CYCLELOG_FUZZ_TARGET names the decoder entry point: a characteristic name (cycling-power-measurement, …)
// or indoor-bike-data-assembler. Every input must decode or throw MalformedPayload — never crash or trap.

#if canImport(Glibc)
    import Glibc
#endif

private let target: String = {
    guard let name = getenv("CYCLELOG_FUZZ_TARGET") else { return "cycling-power-measurement" }
    return String(cString: name)
}()

private let characteristic = Characteristic(identifier: target)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if target == "indoor-bike-data-assembler" {
        // Splits the input into notifications at each 0xFF byte and feeds them in order.
        var assembler = IndoorBikeDataAssembler()
        for fragment in bytes.split(separator: 0xFF, omittingEmptySubsequences: false) {
            if let value = try? IndoorBikeData(decoding: Array(fragment)) { _ = assembler.add(value)?.encoded() }
        }
        return 0
    }
    if target == "fitness-machine-request" {
        // A request read back re-encodes to the same bytes.
        if let request = try? FitnessMachineRequest(decoding: bytes) {
            precondition(request.bytes == bytes, "a fitness machine request re-encoded differently")
            _ = request.description
        }
        return 0
    }
    guard let characteristic else {
        fputs("unknown CYCLELOG_FUZZ_TARGET \(target)\n", stderr)
        abort()
    }
    do throws(MalformedPayload) {
        let fields = try characteristic.decodeFields(bytes)
        _ = fields.count
        // Measurements must re-encode to what a decoder reads back identically.
        switch characteristic {
        case .cyclingPowerMeasurement: try roundTrip(CyclingPowerMeasurement.self, bytes)
        case .cscMeasurement: try roundTrip(CSCMeasurement.self, bytes)
        case .heartRateMeasurement: try roundTrip(HeartRateMeasurement.self, bytes)
        case .indoorBikeData: try roundTrip(IndoorBikeData.self, bytes)
        default: break
        }
    } catch {
        _ = error.description
    }
    return 0
}

/// A decoded measurement re-encodes to the bytes it came from (less any tolerated trailing bytes), and
/// those bytes decode to the same value again.
private func roundTrip<T: EncodableCharacteristicValue>(_ type: T.Type, _ bytes: [UInt8]) throws(MalformedPayload) {
    let encoded = try T(decoding: bytes).encoded()
    precondition(bytes.starts(with: encoded), "re-encoding changed the bytes")
    let again = try T(decoding: encoded).encoded()
    precondition(again == encoded, "decode(encode(x)) != x")
}
