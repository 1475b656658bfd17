import CyclingSensors
import SensorHub
import Testing
import Workouts

@testable import LiveRecording

/// What the hub sends, made once for every transport and again by the journal's replay (`HubOutput`).
struct HubOutputTests {
    /// A Set Cumulative Value journaled at a time counts from the first reading journaled after that time, never
    /// from one at the same time (which may have been journaled before it), so that the live hub and the journal's
    /// replay count alike; two counts in a row, in order; a refused write sets nothing.
    @Test func aJournaledWheelCountIsCarriedOutBeforeTheFirstReadingAfterIt() throws {
        var output = HubOutput()
        var sequence: UInt64 = 0
        func wheelRevolutions(at micros: Int64) throws -> UInt32? {
            sequence += 1
            let reading = LiveRecorder.LiveReading(
                sequence: sequence, arrivalMicroseconds: micros, journalMicroseconds: micros, sensor: "C0:11",
                readings: [ChannelReading(channel: .speedMetersPerSecond, value: 10, rank: 0)],
                shown: [.speedMetersPerSecond])
            let csc = try #require(output.take(reading).first { $0.characteristic == .cscMeasurement })
            return try CSCMeasurement(decoding: csc.value).wheelRevolutionData?.cumulativeWheelRevolutions
        }
        #expect(try wheelRevolutions(at: 0) == 0)
        // 500 = 0x01F4, 1 000 000 = 0x000F4240; a 3-byte value is an Invalid Parameter (CSCS 1.0 §3.4).
        #expect(output.speedAndCadenceWritten([0x01, 0xF4, 0x01, 0x00, 0x00], at: 1_000_000) == [0x10, 0x01, 0x01])
        #expect(output.speedAndCadenceWritten([0x01, 0x40, 0x42, 0x0F, 0x00], at: 1_000_000) == [0x10, 0x01, 0x01])
        #expect(output.speedAndCadenceWritten([0x01, 0x40, 0x42], at: 1_000_000) == [0x10, 0x01, 0x03])
        // At the write's own time: not yet (10 m/s over 2.096 m for 1 s is 4.8 revolutions).
        #expect(try wheelRevolutions(at: 1_000_000) == 4)
        // The first reading after it: the last count set, and on from there (4.8 more by 2 s).
        #expect(try wheelRevolutions(at: 1_000_001) == 1_000_000)
        #expect(try wheelRevolutions(at: 2_000_000) == 1_000_004)
    }
}

/// What every hub sends, made by the recorder's core from its first reading whoever listens.
@Suite struct HubValuesTests {
    /// The values a reading's notifications send, in order, as the hub's apps would get them.
    static func sent(_ messages: [HubMessage], overDirCon: Bool) -> [String] {
        messages.flatMap { message -> [String] in
            guard case .readings(let notifications, let dirCon) = message, dirCon == overDirCon else { return [] }
            return notifications.map { "\($0.characteristic.rawValue) \($0.value)" }
        }
    }

    /// No hub runs: nothing is passed on. An app joins over DirCon 10 s into the ride: what it is sent from then on
    /// (marked for the bus) is the tail of what the journal's replay makes, the counts as from the ride's start.
    /// Once it left, nothing more is passed on.
    @Test func anAppThatJoinsOverDirConMidRideIsSentWhatTheReplayMakes() throws {
        let rig = CoreRig(workout: nil)
        rig.ride(seconds: 10)
        #expect(Self.sent(rig.toApps, overDirCon: false).isEmpty && Self.sent(rig.toApps, overDirCon: true).isEmpty)
        rig.carryOut(rig.core.appJoined("192.168.1.20:50123", name: nil, transport: "DirCon"))
        rig.ride(seconds: 10)
        let sent = Self.sent(rig.toApps, overDirCon: true)
        // A meter and a trainer each second: power, CSC (the trainer's cadence) and Indoor Bike Data.
        #expect(sent.count >= 30)
        let replayed = HubReplay.exchanges(rig.journalEvents).compactMap { event -> String? in
            guard case .hub(.sent(let characteristic, let value)) = event.kind else { return nil }
            return "\(characteristic) \(value)"
        }
        #expect(replayed.count > sent.count)
        #expect(Array(replayed.suffix(sent.count)) == sent)
        // The first power the app was sent counts the crank's revolutions since the ride's start: 10 s at 90 rpm.
        let powers = rig.toApps.compactMap { message -> [UInt8]? in
            guard case .readings(let notifications, overDirCon: true) = message else { return nil }
            return notifications.first { $0.characteristic == .cyclingPowerMeasurement }?.value
        }
        let first = try #require(powers.first)
        let revolutions = try CyclingPowerMeasurement(decoding: first).crankRevolutionData?.cumulativeCrankRevolutions
        #expect((14...16).contains(revolutions ?? 0), "\(String(describing: revolutions))")
        rig.carryOut(rig.core.appLeft("192.168.1.20:50123", at: rig.time))
        let before = rig.toApps.count
        rig.ride(seconds: 3)
        #expect(rig.toApps.count == before)
    }

    /// A start's hub for two rides in a row, the second started at once after the first was saved (no reading
    /// between): each ride's values begin afresh with its first reading, as the replay of its own journal has them.
    @Test func aStartsHubBeginsAfreshForEachRideEvenWithNoReadingBetween() throws {
        let hub = try StartRequest(style: ["hub": .flag(true)], presets: [])
        let rig = CoreRig(workout: nil, waitForStart: true, hub: .onStart)
        rig.ride(seconds: 2)
        for ride in 1...2 {
            let (sentBefore, journalBefore) = (rig.toApps.count, rig.journalEvents.count)
            #expect(rig.core.startRefusal(hub, at: rig.time) == nil)
            rig.carryOut(rig.core.start(hub, at: rig.time))
            rig.ride(seconds: 10)
            let sent = Self.sent(Array(rig.toApps[sentBefore...]), overDirCon: false)
            let replayed = HubReplay.exchanges(Array(rig.journalEvents[journalBefore...])).compactMap {
                event -> String? in
                guard case .hub(.sent(let characteristic, let value)) = event.kind else { return nil }
                return "\(characteristic) \(value)"
            }
            #expect(sent.count >= 30, "ride \(ride)")
            #expect(Array(replayed.prefix(sent.count)) == sent, "ride \(ride)")
            rig.control(.end)
            #expect(rig.saves == ride)
        }
    }

    /// A Bluetooth hub that runs throughout (`--bridge`) is passed every reading's values, not for the bus.
    @Test func aHubThatRunsThroughoutIsPassedEveryReadingsValues() {
        let rig = CoreRig(workout: nil, hub: .always)
        rig.ride(seconds: 5)
        #expect(Self.sent(rig.toApps, overDirCon: false).count >= 15)
        #expect(Self.sent(rig.toApps, overDirCon: true).isEmpty)
    }
}
