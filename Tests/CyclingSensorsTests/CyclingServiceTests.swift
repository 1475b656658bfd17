import CyclingSensors
import Testing

/// The services cyclelog records from, against the Bluetooth SIG's Assigned Numbers (16-bit UUIDs, §3.4.2 services,
/// §3.8 characteristics).
@Suite struct CyclingServiceTests {
    @Test func eachServiceHasItsAssignedNumberAndItsMeasurement() {
        let assigned: [(UInt16, UInt16)] = [(0x1818, 0x2A63), (0x1816, 0x2A5B), (0x180D, 0x2A37), (0x1826, 0x2AD2)]
        #expect(CyclingService.allCases.map { ($0.rawValue, $0.measurement.rawValue) }.elementsEqual(assigned, by: ==))
        // The features and locations, and a trainer's Supported Power, Resistance Level and Inclination Ranges.
        #expect(
            Set(CyclingService.readOnConnect.map(\.rawValue)) == [
                0x2A65, 0x2A5C, 0x2A5D, 0x2ACC, 0x2A38, 0x2AD8, 0x2AD6, 0x2AD5,
            ])
    }
}
