import CyclingSensors
import Testing

/// The requests cyclelog writes to a trainer, against the spec's layouts (FTMS's control point, worked by hand) and
/// a second implementation's numbers (GoldenCheetah's `src/Train/Ftms.h`: its enums, written out here).
@Suite struct FitnessMachineRequestTests {
    @Test func requestsAreTheSpecsBytes() throws {
        let examples: [(FitnessMachineRequest, String)] = [
            (.requestControl, "00"),
            (.reset, "01"),
            (.setTargetResistanceLevel(tenths: 45), "04 2D"),
            (.setTargetPower(watts: 200), "05 C8 00"),
            (.setTargetPower(watts: 300), "05 2C 01"),
            (.setTargetPower(watts: -1), "05 FF FF"),
            (.startOrResume, "07"),
            (.stopOrPause(.stop), "08 01"),
            (.stopOrPause(.pause), "08 02"),
            (.setIndoorBikeSimulation(IndoorBikeSimulation(gradePercent: 5)), "11 00 00 F4 01 28 33"),
            (.spinDownControl(.start), "13 01"),
            (.spinDownControl(.ignore), "13 02"),
        ]
        for (request, hex) in examples {
            #expect(request.bytes == bytes(hex), "\(request)")
            #expect(try FitnessMachineRequest(decoding: bytes(hex)) == request, "\(hex)")
        }
    }

    @Test func opCodesAgreeWithGoldenCheetah() {
        // GoldenCheetah numbers FtmsControlPointCommand from FTMS_REQUEST_CONTROL = 0x00 upwards: RESET 1,
        // SET_TARGET_RESISTANCE_LEVEL 4, SET_TARGET_POWER 5, START_RESUME 7, STOP_PAUSE 8,
        // SET_INDOOR_BIKE_SIMULATION_PARAMS 0x11, SPIN_DOWN_CONTROL 0x13; FTMS_RESPONSE_CODE 0x80; FtmsSpinDown
        // START 1, IGNORE 2.
        let goldenCheetah: [(FitnessMachineRequest, UInt8)] = [
            (.requestControl, 0x00), (.reset, 0x01), (.setTargetResistanceLevel(tenths: 0), 0x04),
            (.setTargetPower(watts: 0), 0x05), (.startOrResume, 0x07), (.stopOrPause(.pause), 0x08),
            (.setIndoorBikeSimulation(IndoorBikeSimulation(gradePercent: 0)), 0x11), (.spinDownControl(.start), 0x13),
        ]
        for (request, opCode) in goldenCheetah { #expect(request.opCode == opCode, "\(request)") }
        #expect(FitnessMachineRequest.SpinDownControl.start.rawValue == 1)
        #expect(FitnessMachineRequest.SpinDownControl.ignore.rawValue == 2)
        // FtmsResultCode: SUCCESS 1 … CONTROL_NOT_PERMITTED 5.
        #expect(
            [
                ControlPointResult.success, .opCodeNotSupported, .invalidParameter, .operationFailed,
                .controlNotPermitted,
            ]
            .map(\.rawValue) == [1, 2, 3, 4, 5])
        // FtmsTargetSetting: RESISTANCE 1 << 2, POWER 1 << 3, INDOOR_BIKE_SIMULATION 1 << 13, SPIN_DOWN 1 << 15.
        let feature = FitnessMachineFeature(targets: [.resistance, .power, .indoorBikeSimulation, .spinDown])
        #expect(feature.targetSettingFeatures == 1 << 2 | 1 << 3 | 1 << 13 | 1 << 15)
        // FtmsStatusOpCode: CONTROL_PERMISSION_LOST 0xFF, SPIN_DOWN_STATUS 20, TARGET_POWER_CHANGED 8.
        #expect(FitnessMachineStatus.OpCode.controlPermissionLost == 0xFF)
        #expect(FitnessMachineStatus.OpCode.spinDownStatus == 20)
        #expect(FitnessMachineStatus.OpCode.targetPowerChanged == 8)
    }

    @Test func theDigestsFeatureExampleListsItsTargets() throws {
        // FTMS's Fitness Machine Feature: targets 0x0000A00C = resistance, power, simulation parameters, spin down.
        let feature = try FitnessMachineFeature(decoding: bytes("86 40 00 00 0C A0 00 00"))
        #expect(feature.supports(.resistance) && feature.supports(.power))
        #expect(feature.supports(.indoorBikeSimulation) && feature.supports(.spinDown))
        #expect(!feature.supports(.inclination))
    }

    @Test func simulationParametersAreScaledRoundedAndHeld() {
        // Crr 0.0040 is 40 on the wire (GoldenCheetah sends 0: it casts without the scale).
        let road = IndoorBikeSimulation(
            gradePercent: -2.346, windSpeedMetresPerSecond: 3.2, rollingResistanceCoefficient: 0.0040,
            windResistanceKilogramsPerMetre: 0.6)
        #expect(road.gradeHundredthsOfPercent == -235)  // to the nearest 0.01 %
        #expect(road.windSpeedMillimetresPerSecond == 3200)
        #expect(road.rollingResistanceTenThousandths == 40)
        #expect(road.windResistanceHundredthsKilogramsPerMetre == 60)
        // Beyond a field's reach: its largest value, never wrapped round.
        let wall = IndoorBikeSimulation(gradePercent: 400, windResistanceKilogramsPerMetre: 3)
        #expect(wall.gradeHundredthsOfPercent == Int16.max)
        #expect(wall.windResistanceHundredthsKilogramsPerMetre == 255)
        #expect(IndoorBikeSimulation(gradePercent: .nan).gradeHundredthsOfPercent == 0)
    }

    @Test func answersTheRiderReads() {
        #expect(
            FitnessMachineControlPoint.refusal(.controlNotPermitted, to: 0x00)
                == "the trainer refused control: another app holds it — close Zwift or the trainer's own app")
        #expect(FitnessMachineControlPoint.refusal(.success, to: 0x05) == nil)
        #expect(
            FitnessMachineControlPoint.refusal(.opCodeNotSupported, to: 0x05)
                == "the trainer does not support Set Target Power (op code not supported)")
    }

    @Test func whatIsNotARequestIsSaidSo() {
        #expect(throws: MalformedPayload.self) { try FitnessMachineRequest(decoding: bytes("80 05 01")) }
        #expect(throws: MalformedPayload.self) { try FitnessMachineRequest(decoding: bytes("08 03")) }
        #expect(throws: MalformedPayload.self) { try FitnessMachineRequest(decoding: bytes("02 10 27")) }
        #expect(throws: MalformedPayload.self) { try FitnessMachineRequest(decoding: bytes("05 C8")) }
        #expect(throws: MalformedPayload.self) { try FitnessMachineRequest(decoding: []) }
    }

    @Test func supportedInclinationRange() throws {
        // −10.0 % to 20.0 % in steps of 0.5 %.
        let range = try SupportedInclinationRange(decoding: bytes("9C FF C8 00 05 00")).range
        #expect(range == SupportedRange(minimum: -100, maximum: 200, minimumIncrement: 5))
        #expect(Characteristic(identifier: "2ad5") == .supportedInclinationRange)
        #expect(throws: MalformedPayload.self) { try SupportedInclinationRange(decoding: bytes("9C FF C8 00 05")) }
    }
}
