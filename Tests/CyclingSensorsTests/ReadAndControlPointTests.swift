import CyclingSensors
import XCTest

final class CyclingPowerVectorAndFeatureTests: XCTestCase {
    func testVectorWithForceArray() throws {
        // Constructed: flags 0x15 = crank data, force array, direction 1; forces 100, −20, 350 N.
        let value = try CyclingPowerVector(decoding: bytes("15 02 01 00 08 64 00 EC FF 5E 01"))
        XCTAssertEqual(value.crankRevolutionData, .init(cumulativeCrankRevolutions: 258, lastCrankEventTime: 2048))
        XCTAssertEqual(value.instantaneousForceMagnitudes, [100, -20, 350])
        XCTAssertNil(value.instantaneousTorqueMagnitudes)
        XCTAssertEqual(value.measurementDirection, 1)
    }

    func testVectorWithAngleAndTorqueArray() throws {
        let value = try CyclingPowerVector(decoding: bytes("0A 5A 00 40 00 E0 FF"))
        XCTAssertEqual(value.firstCrankMeasurementAngle, 90)
        XCTAssertEqual(value.instantaneousTorqueMagnitudes, [64, -32])
        XCTAssertEqual(value.measurementDirection, 0)
    }

    func testVectorErrors() {
        assertMalformed(
            CyclingPowerVector.self, bytes("04 64 00 EC"), field: "instantaneousForceMagnitudes", offset: 3,
            .truncated(needed: 2, available: 1))
        assertMalformed(
            CyclingPowerVector.self, bytes("01 02 01 00"), field: "lastCrankEventTime", offset: 3,
            .truncated(needed: 2, available: 1))
        assertMalformed(
            CyclingPowerVector.self, bytes("00 AA"), field: "trailingBytes", offset: 1,
            .unexpectedTrailingBytes(count: 1))
    }

    func testFeatureBitsIncludingDistributedSystem() throws {
        // gymnasticon's feature value: 0x0C = wheel + crank revolution data.
        // Served as CPS 3.2 lays it out: a uint32, little-endian.
        XCTAssertEqual(CyclingPowerFeature(features: [.crankRevolutionData]).encoded(), bytes("08 00 00 00"))
        XCTAssertEqual(
            CyclingPowerFeature(features: [.wheelRevolutionData, .crankLengthAdjustment]).encoded(),
            bytes("04 10 00 00"))
        let wheelAndCrank = try CyclingPowerFeature(decoding: bytes("0C 00 00 00"))
        XCTAssertEqual(wheelAndCrank.features, [.wheelRevolutionData, .crankRevolutionData])
        XCTAssertEqual(wheelAndCrank.distributedSystemSupport, .unspecified)
        // 0x0011008B: bits 0, 1, 3, 7, 16 and bits 20–21 = 1.
        let value = try CyclingPowerFeature(decoding: bytes("8B 00 11 00"))
        XCTAssertTrue(
            value.features.isSuperset(of: [
                .pedalPowerBalance, .accumulatedTorque, .crankRevolutionData, .accumulatedEnergy,
                .torqueBasedMeasurementContext,
            ]))
        XCTAssertFalse(value.features.contains(.extremeAngles), "bit 5 is extreme angles (pycycling shifts it)")
        XCTAssertEqual(value.distributedSystemSupport, .notForDistributedSystems)
        XCTAssertEqual(
            try CyclingPowerFeature(decoding: bytes("00 00 20 00")).distributedSystemSupport,
            .canBeUsedInDistributedSystem)
        XCTAssertEqual(try CyclingPowerFeature(decoding: bytes("00 00 30 00")).distributedSystemSupport, .reserved)
        XCTAssertTrue(
            try CyclingPowerFeature(decoding: bytes("00 00 08 00")).features.contains(.enhancedOffsetCompensation))
        // The GATT Specification Supplement says 4 octets, but a real Wahoo KICKR sends 2: a short field gives the bits it has and says
        // which are unknown; nothing at all, or a fifth octet, is malformed.
        let kickr = try CyclingPowerFeature(decoding: bytes("0E 00"))
        XCTAssertEqual(kickr.features, [.accumulatedTorque, .wheelRevolutionData, .crankRevolutionData])
        XCTAssertEqual(kickr.sentOctets, 2)
        XCTAssertTrue(kickr.knows(.crankLengthAdjustment))
        XCTAssertFalse(kickr.knows(.enhancedOffsetCompensation))
        XCTAssertFalse(kickr.knows(.torqueBasedMeasurementContext))
        XCTAssertTrue(try CyclingPowerFeature(decoding: bytes("8B 00 11 00")).knows(.enhancedOffsetCompensation))
        XCTAssertEqual(try CyclingPowerFeature(decoding: bytes("0E 00 01")).features.rawValue, 0x01_000E)
        XCTAssertThrowsError(try CyclingPowerFeature(decoding: []))
        XCTAssertThrowsError(try CyclingPowerFeature(decoding: bytes("0E 00 00 00 00")))
    }

    func testLocations() throws {
        XCTAssertEqual(try SensorLocation(decoding: [0x05]).name, "Left Crank")
        XCTAssertEqual(try SensorLocation(decoding: [0x0D]).name, "Rear Hub")
        XCTAssertEqual(try SensorLocation(decoding: [0x0F]).name, "Spider")
        XCTAssertEqual(try SensorLocation(decoding: [0x10]).name, "Chain Ring")
        XCTAssertEqual(try SensorLocation(decoding: [0x11]).name, "reserved (17)")
        XCTAssertEqual(try BodySensorLocation(decoding: [0x01]).name, "Chest")
        XCTAssertEqual(try BodySensorLocation(decoding: [0x07]).name, "reserved (7)")
        assertMalformed(
            SensorLocation.self, [], field: "sensorLocation", offset: 0, .truncated(needed: 1, available: 0))
    }

    func testCSCFeature() throws {
        XCTAssertEqual(
            try CSCFeature(decoding: bytes("07 00")).features,
            [.wheelRevolutionData, .crankRevolutionData, .multipleSensorLocations])
        XCTAssertEqual(
            try CSCFeature(decoding: bytes("05 00")).features, [.wheelRevolutionData, .multipleSensorLocations])
        XCTAssertEqual(try CSCFeature(decoding: bytes("00 00")).features, [])
        // Served as CSCS 3.2 lays it out: a uint16, little-endian.
        XCTAssertEqual(CSCFeature(features: [.wheelRevolutionData, .crankRevolutionData]).encoded(), bytes("03 00"))
        XCTAssertEqual(CSCFeature(features: [.multipleSensorLocations]).encoded(), bytes("04 00"))
    }
}

final class ControlPointTests: XCTestCase {
    func testCyclingPowerControlPointExamples() throws {
        // CPS's procedures, worked by hand.
        XCTAssertEqual(CyclingPowerControlPoint.setCrankLength(halfMillimetres: 345), bytes("04 59 01"))
        let set = try CyclingPowerControlPoint(decoding: bytes("04 59 01")).message
        XCTAssertNil(set.result)
        XCTAssertEqual(set.opCode, 0x04)
        XCTAssertEqual(set.parameter("crankLength"), .integer(345))
        let ack = try CyclingPowerControlPoint(decoding: bytes("20 04 01")).message
        XCTAssertEqual(ack.opCode, 0x04)
        XCTAssertEqual(ack.result, .success)
        let length = try CyclingPowerControlPoint(decoding: bytes("20 05 01 59 01")).message
        XCTAssertEqual(length.parameter("crankLength"), .integer(345))  // 172.5 mm
        let locations = try CyclingPowerControlPoint(decoding: bytes("20 03 01 05 06 0F")).message
        XCTAssertEqual(locations.parameter("supportedSensorLocations"), .list([5, 6, 15]))
        let offset = try CyclingPowerControlPoint(decoding: bytes("20 0C 01 F6 FF")).message
        XCTAssertEqual(offset.parameter("offsetCompensation"), .integer(-10))
        XCTAssertEqual(
            try CyclingPowerControlPoint(decoding: bytes("20 0E 01 40")).message.parameter("samplingRate"), .integer(64)
        )
        let notSupported = try CyclingPowerControlPoint(decoding: bytes("20 0F 02")).message
        XCTAssertEqual(notSupported.result, .opCodeNotSupported)
        XCTAssertTrue(notSupported.parameters.isEmpty)
        XCTAssertEqual(CyclingPowerControlPoint.response(to: 0x05, result: .success, [345]), bytes("20 05 01 59 01"))
        XCTAssertEqual(CyclingPowerControlPoint.request(0x0C), [0x0C])
        XCTAssertEqual(CyclingPowerControlPoint.request(0x01, [0]), bytes("01 00 00 00 00"))
    }

    func testCyclingPowerControlPointErrors() {
        assertMalformed(
            CyclingPowerControlPoint.self, bytes("20 05 01 59"), field: "crankLength", offset: 3,
            .truncated(needed: 2, available: 1))
        assertMalformed(
            CyclingPowerControlPoint.self, bytes("20 05"), field: "resultCode", offset: 2,
            .truncated(needed: 1, available: 0))
        assertMalformed(
            CyclingPowerControlPoint.self, bytes("04 59 01 00"), field: "trailingBytes", offset: 3,
            .unexpectedTrailingBytes(count: 1))
    }

    func testSCControlPointExamples() throws {
        // The SC Control Point's procedures: reset the wheel count, supported locations, calibration not supported.
        XCTAssertEqual(SCControlPoint.request(0x01, [0]), bytes("01 00 00 00 00"))
        XCTAssertEqual(try SCControlPoint(decoding: bytes("10 01 01")).message.result, .success)
        XCTAssertEqual(
            try SCControlPoint(decoding: bytes("10 04 01 04 0C 0D")).message.parameter("supportedSensorLocations"),
            .list([4, 12, 13]))
        XCTAssertEqual(try SCControlPoint(decoding: bytes("10 02 02")).message.result, .opCodeNotSupported)
        // 0x20 is CPS's response code, not CSC's: here it is an unknown request op code.
        let foreign = try SCControlPoint(decoding: bytes("20 04 01")).message
        XCTAssertNil(foreign.result)
        XCTAssertEqual(foreign.unparsedParameter, [0x04, 0x01])
    }

    func testFitnessMachineControlPointExamples() throws {
        // FTMS's control point, worked by hand.
        XCTAssertEqual(FitnessMachineControlPoint.request(0x00), [0x00])
        XCTAssertEqual(FitnessMachineControlPoint.setTargetPower(watts: 200), bytes("05 C8 00"))
        XCTAssertEqual(try FitnessMachineControlPoint(decoding: bytes("80 05 01")).message.result, .success)
        let sim = try FitnessMachineControlPoint(decoding: bytes("11 00 00 F4 01 28 33")).message
        XCTAssertEqual(sim.parameter("windSpeed"), .integer(0))
        XCTAssertEqual(sim.parameter("grade"), .integer(500))  // 5.00 %
        XCTAssertEqual(sim.parameter("rollingResistanceCoefficient"), .integer(40))  // 0.0040, not 0.40
        XCTAssertEqual(sim.parameter("windResistanceCoefficient"), .integer(51))  // 0.51 kg/m
        XCTAssertEqual(FitnessMachineControlPoint.request(0x11, [0, 500, 40, 51]), bytes("11 00 00 F4 01 28 33"))
        XCTAssertEqual(
            try FitnessMachineControlPoint(decoding: bytes("08 02")).message.parameter("stopOrPause"), .integer(2))
        XCTAssertEqual(try FitnessMachineControlPoint(decoding: bytes("80 05 05")).message.result, .controlNotPermitted)
        // Targeted cadence is uint16 in 0.5 rpm (pycycling writes one byte).
        XCTAssertEqual(FitnessMachineControlPoint.request(0x14, [180]), bytes("14 B4 00"))
        let spinDown = try FitnessMachineControlPoint(decoding: bytes("80 13 01 D0 07 B8 0B")).message
        XCTAssertEqual(spinDown.parameter("targetSpeedLow"), .integer(2000))
        XCTAssertEqual(spinDown.parameter("targetSpeedHigh"), .integer(3000))
    }

    func testSimclinePaddedWritesAreRejected() {
        // simcline pads its writes to 8 bytes; Set Indoor Bike Simulation Parameters takes 6 after the op code.
        assertMalformed(
            FitnessMachineControlPoint.self, bytes("11 00 00 5D FF 28 33 00"), field: "trailingBytes", offset: 7,
            .unexpectedTrailingBytes(count: 1))
    }

    func testFitnessMachineStatusExamples() throws {
        XCTAssertEqual(try FitnessMachineStatus(decoding: [0x04]).message.opCode, 0x04)
        XCTAssertEqual(try FitnessMachineStatus(decoding: bytes("02 02")).message.parameter("stopOrPause"), .integer(2))
        XCTAssertEqual(
            try FitnessMachineStatus(decoding: bytes("08 C8 00")).message.parameter("targetPower"), .integer(200))
        // Elite trainer: simulation parameters changed, grade 0xFF57 = −169 → −1.69 %.
        let sim = try FitnessMachineStatus(decoding: bytes("12 00 00 57 FF 28 33")).message
        XCTAssertEqual(sim.parameter("grade"), .integer(-169))
        XCTAssertEqual(try FitnessMachineStatus(decoding: [0xFF]).message.opCode, 0xFF)
        XCTAssertEqual(FitnessMachineStatus.encode(0x08, [200]), bytes("08 C8 00"))
        XCTAssertEqual(
            try FitnessMachineStatus(decoding: bytes("0F 10 0E 20 1C")).message.parameter("targetedTimeInZones"),
            .list([3600, 7200]))
    }

    func testFitnessMachineReadValues() throws {
        // FTMS's Fitness Machine Feature: features 0x00004086 and targets 0x0000A00C, little-endian (Wireshark reads big-endian).
        let feature = try FitnessMachineFeature(decoding: bytes("86 40 00 00 0C A0 00 00"))
        XCTAssertEqual(feature.fitnessMachineFeatures, 0x4086)
        XCTAssertEqual(feature.targetSettingFeatures, 0xA00C)
        assertMalformed(
            FitnessMachineFeature.self, bytes("86 40 00 00 0C A0"), field: "targetSettingFeatures", offset: 4,
            .truncated(needed: 4, available: 2))
        let power = try SupportedPowerRange(decoding: bytes("19 00 DC 05 05 00")).range
        XCTAssertEqual([power.minimum, power.maximum], [25, 1500])
        XCTAssertEqual(power.minimumIncrement, 5)
        XCTAssertEqual(try SupportedPowerRange(decoding: bytes("00 00 D0 07 01 00")).range.maximum, 2000)
        let resistance = try SupportedResistanceLevelRange(decoding: bytes("F6 FF 64 00 01 00")).range
        XCTAssertEqual(resistance.minimum, -10)
        let status = try TrainingStatus(decoding: bytes("00 0A"))
        XCTAssertEqual(status.statusName, "Speed Outside of Control Region - High")
        XCTAssertNil(status.statusString)
        let withText = try TrainingStatus(decoding: bytes("01 08 52 61 6D 70"))
        XCTAssertEqual(withText.statusName, "Fitness Test")
        XCTAssertEqual(withText.statusString, "Ramp")
        assertMalformed(
            TrainingStatus.self, bytes("01 08 FF"), field: "trainingStatusString", offset: 2, .invalidValue("not UTF-8")
        )
    }

    func testBatteryAndDeviceInformation() throws {
        XCTAssertEqual(try BatteryLevel(decoding: [0x64]).percent, 100)
        XCTAssertEqual(try BatteryLevel(decoding: [0x4B]).percent, 75)
        XCTAssertEqual(try BatteryLevel(decoding: [0xC8]).fields.first?.meaning, "reserved value (over 100 %)")
        assertMalformed(
            BatteryLevel.self, [0x64, 0x00], field: "trailingBytes", offset: 1, .unexpectedTrailingBytes(count: 1))
        XCTAssertEqual(
            try DeviceInformationString(
                decoding: bytes("57 61 68 6F 6F 20 46 69 74 6E 65 73 73"), characteristic: .manufacturerNameString
            ).text, "Wahoo Fitness")
        XCTAssertEqual(
            try DeviceInformationString(decoding: bytes("4B 49 43 4B 52 00"), characteristic: .modelNumberString).text,
            "KICKR")
        XCTAssertEqual(
            try DeviceInformationString(
                decoding: bytes("31 2E 32 2E 33 20 00 00"), characteristic: .firmwareRevisionString
            ).text, "1.2.3")
        XCTAssertThrowsError(try DeviceInformationString(decoding: [0xC3, 0x28], characteristic: .serialNumberString))
    }
}

final class CharacteristicIdentifierTests: XCTestCase {
    func testEveryFormTheCommandLineAccepts() {
        for text in [
            "2a63", "0x2A63", "2A63", "00002a63-0000-1000-8000-00805f9b34fb", "00002A63-0000-1000-8000-00805F9B34FB",
            "cycling-power-measurement",
        ] {
            XCTAssertEqual(Characteristic(identifier: text), .cyclingPowerMeasurement, text)
        }
        XCTAssertNil(Characteristic(identifier: "2a99"))
        XCTAssertNil(Characteristic(identifier: "power"))
        XCTAssertNil(Characteristic(identifier: "0x"))
        XCTAssertEqual(Characteristic.indoorBikeData.uuidString, "00002ad2-0000-1000-8000-00805f9b34fb")
        XCTAssertEqual(Characteristic.manufacturerNameString.jsonKey, "manufacturerNameString")
        for characteristic in Characteristic.allCases {
            XCTAssertEqual(Characteristic(identifier: characteristic.name), characteristic)
            XCTAssertEqual(Characteristic(identifier: characteristic.uuidString), characteristic)
        }
    }
}
