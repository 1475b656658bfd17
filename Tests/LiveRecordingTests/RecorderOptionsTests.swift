import StructuredWorkouts
import Testing
import WorkoutStore
import Workouts

@testable import LiveRecording

/// `record`'s options completed from what the rider did not say, as the recording guide states it.
@Suite struct RecorderOptionsTests {
    static let known = [
        KnownSensor(
            address: "C0:11:22:33:44:55", name: "Assioma", wheelCircumferenceMillimetres: 2105, lastUsedMicroseconds: 2),
        KnownSensor(
            address: "D0:11:22:33:44:55", name: "Strap", wheelCircumferenceMillimetres: nil, lastUsedMicroseconds: 1),
    ]

    @Test func withoutSensorsNamedTheRememberedOnesAreTheRidesWithTheirWheels() {
        var options = LiveRecorder.Options()
        options.complete(knownSensors: Self.known, startedByTheBus: false)
        #expect(options.sensors == ["C0:11:22:33:44:55", "D0:11:22:33:44:55"])
        #expect(options.wheelCircumferences == ["C0:11:22:33:44:55": 2105])
        #expect(options.autoPause == nil && options.plan.fitnessTest == nil && options.activatedGraceSeconds == 0)
        var named = LiveRecorder.Options()
        named.sensors = ["Stages"]
        named.complete(knownSensors: Self.known, startedByTheBus: false)
        #expect(named.sensors == ["Stages"])
    }

    @Test func anAutomaticRidePausesARampTestWorkoutIsATestAndABusStartWaits() {
        var options = LiveRecorder.Options()
        options.auto = LiveRecorder.AutoRide()
        options.workout = LiveRecorder.WorkoutChoice(
            id: "ramp-test",
            planned: PlannedWorkout(BuiltInWorkouts.ramp(startWatts: 100, stepWatts: 20), ftpWatts: nil))
        options.complete(knownSensors: [], startedByTheBus: true)
        #expect(options.autoPause != nil)
        #expect(options.plan.fitnessTest == .ramp)
        #expect(options.activatedGraceSeconds == 30)
    }
}
