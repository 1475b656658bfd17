import DBus
import Foundation
import RecorderInterface
import Testing
import TrainerControl
import Workouts

/// The recorder's typed status against its D-Bus encoding and the published reference.
@Suite struct RecorderStatusTests {
    /// A status with every property away from its default.
    static func everythingSet() -> RecorderStatus {
        var status = RecorderStatus()
        status.state = .paused
        status.workoutId = 7
        status.elapsedSeconds = 3_661
        status.movingSeconds = 3_600
        status.powerWatts = 251.5
        status.cadenceRPM = 88
        status.speedMetersPerSecond = 9.75
        status.heartRateBPM = 142
        status.distanceMeters = 35_100
        status.lap = 3
        status.name = "Tempo \"long\""
        status.location = "indoor"
        status.goal = "3600s"
        status.goalProgress = 0.5
        status.lapElapsedSeconds = 600
        status.workJoules = 900_000
        status.waterMillilitres = 500
        status.can.start = true
        status.can.resume = true
        status.can.end = true
        status.can.cancel = true
        status.controlSequence = 7 << 32 | 4
        status.sensors = [
            .init(name: "Assioma", address: "C0:11:22:33:44:55", state: .streaming, batteryPercent: 15),
            .init(name: "Heart", address: "", state: .searching, batteryPercent: nil),
        ]
        status.suggestedWorkouts = [
            .init(
                WorkoutPreset(
                    id: "ramp", title: "Ramp test",
                    request: StartRequest(
                        plan: WorkoutPlan(name: "Ramp", goal: .timeSeconds(1200), location: .indoor),
                        when: .pedalling, endAtGoal: true)))
        ]
        return status
    }

    @Test func everyPropertyReadsBackAsItWasWritten() {
        let status = Self.everythingSet()
        let values = status.values
        #expect(values.count == RecorderStatus.properties.count)
        #expect(RecorderStatus(values: values) == status)
        // Each property carries the type the interface declares for it.
        for property in RecorderStatus.properties {
            #expect(values[property.name]?.signature == property.signature, "\(property.name)")
        }
    }

    /// The states are the words the D-Bus reference documents (`State`, `TrainerMode`, `TrainerState`, a sensor's
    /// state), on the bus as text; a word this version does not know reads as nil, and nil is an empty text.
    @Test func theStatesAreTheDocumentedWords() {
        for (state, word) in [
            (RecorderState.waiting, "waiting"), (.armed, "armed"), (.running, "running"), (.paused, "paused"),
            (.ended, "ended"), (.cancelled, "cancelled"),
        ] {
            var status = RecorderStatus()
            status.state = state
            #expect(status.value("State") == .string(word))
            #expect(RecorderStatus(values: ["State": .string(word)]).state == state)
        }
        for (mode, word) in [
            (TrainerMode.erg, "erg"), (.simulation, "sim"), (.resistance, "resistance"), (.free, "free"),
        ] {
            var status = RecorderStatus()
            status.trainerMode = mode
            #expect(status.value("TrainerMode") == .string(word))
        }
        let trainerWords = [
            "absent", "disconnected", "free", "asking", "controlled", "ramping", "recovering", "refused",
        ]
        #expect(trainerWords.allSatisfy { RecorderStatus(values: ["TrainerState": .string($0)]).trainerState != nil })
        let sensorWords = ["searching", "connecting", "streaming", "zero", "stale", "reconnecting"]
        #expect(sensorWords.compactMap(SensorState.init(rawValue:)).count == sensorWords.count)
        #expect(RecorderStatus(values: ["State": .string("flying")]).state == nil)
        #expect(RecorderStatus().value("State") == .string(""))
        #expect(RecorderStatus().value("TrainerMode") == .string(""))
    }

    @Test func anUnknownMeasurementIsNaNOnTheBusAndNilInTheStatus() throws {
        let values = RecorderStatus().values
        for name in ["PowerWatts", "CadenceRPM", "SpeedMetersPerSecond", "HeartRateBPM", "GoalProgress"] {
            let number = try #require(values[name]?.number)
            #expect(number.isNaN, "\(name)")
        }
        #expect(RecorderStatus(values: values).powerWatts == nil)
        #expect(RecorderStatus(values: values).json("PowerWatts") == .null)
        #expect(RecorderStatus(values: ["Sensors": values["Sensors"]!]).sensors == [])
    }

    @Test func aChangeAppliesOnlyWhatItNamesWithItsDeclaredType() {
        var status = Self.everythingSet()
        let taken = status.apply([
            "PowerWatts": .variant(.double(300)), "Lap": .uint32(4),
            // A value of another type than the interface declares, and a name it does not have: left alone.
            "WorkoutId": .string("eight"), "Gear": .uint32(11),
        ])
        #expect(taken == ["PowerWatts", "Lap"])
        #expect(status.powerWatts == 300)
        #expect(status.lap == 4)
        #expect(status.workoutId == 7)
    }

    @Test func aSensorsUnknownBatteryIsMinusOneOnTheBusAndNullInJSON() {
        let status = Self.everythingSet()
        guard case .array(_, let sensors)? = status.values["Sensors"], case .structure(let fields) = sensors[1] else {
            Issue.record("Sensors is not an array of structures")
            return
        }
        #expect(fields[3] == .int32(-1))
        let json = try? JSONSerialization.jsonObject(with: Data(status.json("Sensors").rendered().utf8))
        let shown = json as? [[String: Any]] ?? []
        #expect(shown.count == 2)
        let battery = shown.first?["batteryPercent"] as? Int
        #expect(battery == 15)
        #expect(shown.last?["batteryPercent"] is NSNull)
        let address = shown.last?["address"] as? String
        #expect(address == "")
    }

    /// Docs/reference/dbus.md's interface XML is the interface: the same properties, types and order (its
    /// `CanStart` line stands for the six `Can…` flags, as its comment says), methods and signals.
    @Test func theReferencePageListsTheInterfaceAsItIs() throws {
        let page = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Docs/reference/dbus.md"), encoding: .utf8)
        let xml = try #require(
            page.components(separatedBy: "```xml").dropFirst().first?.components(separatedBy: "```").first)
        func pairs(_ element: String) throws -> [String] {
            let pattern = try NSRegularExpression(pattern: "<\(element) name=\"([A-Za-z]+)\"(?: type=\"([^\"]+)\")?")
            let range = NSRange(xml.startIndex..., in: xml)
            return pattern.matches(in: xml, range: range).map { match in
                (1..<match.numberOfRanges).compactMap { Range(match.range(at: $0), in: xml).map { String(xml[$0]) } }
                    .joined(separator: " ")
            }
        }
        let declared = RecorderStatus.properties.map { "\($0.name) \($0.signature)" }
        let others = ["CanPause", "CanResume", "CanLap", "CanEnd", "CanCancel"].map { "\($0) b" }
        #expect(try pairs("property") == declared.filter { !others.contains($0) })
        #expect(declared.filter { others.contains($0) }.count == others.count)
        #expect(
            try Set(pairs("method"))
                == Set(
                    ["Start", "Marker", "Intake", "Undo", "Control"] + RecorderControl.methods.map(\.name)
                        + RecorderControl.hubMethods))
        #expect(try Set(pairs("signal")) == Set(RecorderControl.signals.map(\.name)))
        #expect(RecorderControl.properties.map { "\($0.name) \($0.signature)" } == declared)
    }
}
