import CyclingSensors
import Testing

/// The examples of the module's documentation (Documentation.docc), with the values worked out by hand from the
/// bytes: what a reader copies must do what the page says.
@Suite struct DocumentationExampleTests {
    @Test func aPowerMeasurementDecodesToThePowerAndCrankDataOfItsBytes() throws {
        let measurement = try CyclingPowerMeasurement(decoding: [0x20, 0x00, 0xCD, 0x00, 0xBA, 0x04, 0x4B, 0xB5])
        #expect(measurement.instantaneousPower == 205)  // 0x00CD
        #expect(measurement.crankRevolutionData?.cumulativeCrankRevolutions == 1210)  // 0x04BA
        #expect(measurement.crankRevolutionData?.lastCrankEventTime == 46_411)  // 0xB54B
        #expect(throws: MalformedPayload.self) { try CyclingPowerMeasurement(decoding: [0x20, 0x00, 0xCD]) }
    }

    @Test func twoMeasurementsThreeQuartersOfASecondApartAreEightyRPM() throws {
        let earlier = try CyclingPowerMeasurement(decoding: [0x20, 0x00, 0xCD, 0x00, 0xBA, 0x04, 0x4B, 0xB5])
        let later = try CyclingPowerMeasurement(decoding: [0x20, 0x00, 0xD2, 0x00, 0xBB, 0x04, 0x4B, 0xB8])
        let a = try #require(earlier.crankRevolutionData)
        let b = try #require(later.crankRevolutionData)
        let revolutions = b.cumulativeCrankRevolutions &- a.cumulativeCrankRevolutions
        let ticks = b.lastCrankEventTime &- a.lastCrankEventTime
        #expect(revolutions == 1)
        #expect(ticks == 768)
        #expect(Double(revolutions) / (Double(ticks) / 1024) * 60 == 80)
        // Across the wrap of both 16-bit counters, the same step.
        let wrappedRevolutions: UInt16 = 0x0000 &- 0xFFFF
        let wrappedTicks: UInt16 = 0x02D0 &- 0xFFD0
        #expect(wrappedRevolutions == 1)
        #expect(wrappedTicks == 768)
    }
}
