import Foundation
import RecorderInterface
import TestSupport
import Workouts
import XCTest

/// What a device paired for some data types gets from the real `cyclelog-mirror` (Docs/reference/data-types.md):
/// every route, the live stream and every file served, swept over devices paired for each combination of the
/// measurement types; a grant changed on an open stream; the controls each type allows.
final class GrantedTypesTests: XCTestCase {
    /// The JSON keys that carry each type's values (Docs/reference/http-api.md; the summary's as `show --json`
    /// writes them). Each must be absent, null, empty or (a distance) 0 for a device not granted its type.
    static let keys: [DataType: Set<String>] = [
        .power: [
            "powerWatts", "instantaneousPowerWatts", "averagePowerWatts", "maximumPowerWatts", "normalizedPowerWatts",
            "powerCurveWatts", "intensityFactor", "trainingStressScore", "variabilityIndex", "xPowerWatts",
            "powerZones", "ftpWatts", "criticalPowerWatts", "wPrimeJoules", "wPrimeBalanceMinimumJoules",
            "wPrimeBalanceMinimumDifferentialJoules", "meanPowerWatts", "ergMeanAbsoluteDifferenceWatts",
            "efficiencyFactor", "aerobicDecouplingPercent", "fitnessTest", "plan",
        ],
        .cadence: ["cadenceRPM", "averageCadenceRPM", "maximumCadenceRPM", "meanCadenceRPM"],
        .speed: [
            "speedMetersPerSecond", "averageSpeedMetersPerSecond", "maximumSpeedMetersPerSecond", "distanceMeters",
            "distanceMetersThisSecond",
        ],
        .hr: [
            "heartRateBPM", "averageHeartRateBPM", "maximumHeartRateBPM", "efficiencyFactor",
            "aerobicDecouplingPercent",
        ],
        .energy: ["workJoules", "energyKilocalories"],
        .intake: ["waterMillilitres", "intake"],
    ]

    static let measurements: [DataType] = [.power, .cadence, .speed, .hr, .energy]

    /// A real ride with power, speed and heart rate (Fixtures/rides: a road ride's FIT file as its sensors'
    /// notifications) through every history route, for a device paired for each of the 16 combinations of the
    /// four measurement types other than energy (with the history), and for one without the history.
    func testEachRouteAndFileHoldsOnlyTheTypesTheDeviceWasGranted() async throws {
        try await sweep(combinations: 0..<(1 << (Self.measurements.count - 1)), thenWithoutHistory: true)
    }

    /// The same for the 16 combinations with energy (the two halves run side by side).
    func testEachRouteAndFileHoldsOnlyTheTypesTheDeviceWasGrantedWithEnergy() async throws {
        try await sweep(
            combinations: (1 << (Self.measurements.count - 1))..<(1 << Self.measurements.count),
            thenWithoutHistory: false)
    }

    /// Devices paired for each combination of `measurements` numbered in `combinations` (bit i: `measurements[i]`)
    /// through every route and file; `thenWithoutHistory`: then a device without the history.
    private func sweep(combinations: Range<Int>, thenWithoutHistory: Bool) async throws {
        let database = try temporaryDatabase()
        let journal = fixturesFolder.appendingPathComponent("rides/sweatpy_4078723797.journal").path
        let replay = try cyclelog(["replay", "--db", database, journal])
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        let id = 1
        // The heart rates the strap sent, read from the journal's bytes as the Heart Rate Measurement lays them
        // out (flags bit 0: the value is uint16 little-endian, else uint8): what must never reach a device
        // without hr.
        let heartRates = Set(
            try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").compactMap { line -> Int? in
                let fields = line.split(separator: " ")
                guard fields.count == 5, fields[3] == "2a37" else { return nil }
                let bytes = stride(from: 0, to: fields[4].count, by: 2).compactMap { offset -> UInt8? in
                    let start = fields[4].index(fields[4].startIndex, offsetBy: offset)
                    return UInt8(fields[4][start..<fields[4].index(start, offsetBy: 2)], radix: 16)
                }
                guard bytes.count >= 2 else { return nil }
                return bytes[0] & 1 == 0 ? Int(bytes[1]) : Int(bytes[1]) | Int(bytes[2]) << 8
            })
        XCTAssertGreaterThan(heartRates.count, 20, "the fixture's strap")

        let bus = try PrivateBus()
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0", extra: ["--db", database])
        defer { mirror.signal(SIGTERM) }
        let routes = [
            "/api/v1/workouts", "/api/v1/workouts/\(id)", "/api/v1/workouts/\(id)/samples",
            "/api/v1/workouts/\(id)/range?from=600&to=1800", "/api/v1/workouts/\(id)/wprime",
            "/api/v1/ftp", "/api/v1/power-curve", "/api/v1/weekly-load",
        ]
        let pictures = [
            "/api/v1/workouts/\(id)/chart.svg", "/api/v1/workouts/\(id)/sparkline.svg", "/api/v1/power-curve.svg",
            "/api/v1/weekly-load.svg", "/api/v1/workouts/\(id)/wprime.svg",
        ]

        for combination in combinations {
            let granted = Set(
                Self.measurements.indices.filter { combination & (1 << $0) != 0 }.map {
                    Self.measurements[$0]
                })
            // Intake with one device in three (the journal holds the ride's intake too).
            let withIntake = combination % 3 == 0 ? granted.union([.intake]) : granted
            let withheld = Set(Self.measurements + [.intake]).subtracting(withIntake)
            let list = DataType.text(withIntake.union([.history]))
            let token = try XCTUnwrap(
                try runMirror(["pair", "--name", "screen \(combination)", "--types", list, "--token", "--json"], bus)
                    .jsonObject["token"] as? String)
            let what = "granted \(list)"

            for route in routes {
                let answer = try get(port, route, token: token)
                // The reports over every ride's power are not there without power; W′ balance is a ride's power.
                if withheld.contains(.power),
                    route.contains("ftp") || route.contains("power-curve")
                        || route.contains("weekly-load") || route.contains("wprime")
                {
                    XCTAssertEqual(answer.status, 404, "\(what) \(route): \(answer.body)")
                    continue
                }
                // One ride makes no critical-power model: its W′ balance is not there for anyone.
                if route.hasSuffix("/wprime") {
                    XCTAssertEqual(answer.status, 404, answer.body)
                    XCTAssertTrue(answer.body.contains("no critical-power model"), answer.body)
                    continue
                }
                XCTAssertEqual(answer.status, 200, "\(what) \(route): \(answer.body)")
                let value = try JSONSerialization.jsonObject(with: Data(answer.body.utf8))
                for type in withheld {
                    let leaks = Self.valuesUnder(Self.keys[type] ?? [], in: value)
                    XCTAssertEqual(leaks, [], "\(what) \(route): \(type) values reached the device")
                }
                if route.hasSuffix("/samples") {
                    let columns = Set((value as? [String: Any] ?? [:]).keys)
                    XCTAssertEqual(columns.contains("heartRateBPM"), granted.contains(.hr), "\(what): \(columns)")
                    if granted.contains(.hr) {
                        // The check can fail: the column holds the strap's values (each second's time-weighted
                        // mean of them, so within their range).
                        let shown = ((value as? [String: Any])?["heartRateBPM"] as? [Any] ?? []).compactMap {
                            $0 as? Double
                        }
                        let range = Double(heartRates.min() ?? 0)...Double(heartRates.max() ?? 0)
                        XCTAssertGreaterThan(shown.count, 1000, what)
                        XCTAssertTrue(
                            shown.allSatisfy(range.contains), "\(what): \(shown.filter { !range.contains($0) })")
                    }
                }
            }
            for picture in pictures {
                let answer = try get(port, picture, token: token)
                if withheld.contains(.power) && !picture.contains("/chart.svg") && !picture.contains("sparkline")
                    || picture.hasSuffix("wprime.svg")
                {
                    XCTAssertEqual(answer.status, 404, "\(what) \(picture)")
                    continue
                }
                XCTAssertEqual(answer.status, 200, "\(what) \(picture): \(answer.body.prefix(200))")
                for (type, title) in [(DataType.hr, "Heart rate"), (.power, "Power"), (.cadence, "Cadence")]
                where withheld.contains(type) && picture.contains("/chart.svg") {
                    XCTAssertFalse(answer.body.contains(">\(title)<"), "\(what): the chart drew \(title)")
                }
            }

            // The files: CSV columns of a withheld type empty on every row; TCX without their elements.
            let csv = try get(port, "/api/v1/workouts/\(id)/export.csv", token: token)
            XCTAssertEqual(csv.status, 200, "\(what): \(csv.body.prefix(200))")
            let rows = csv.body.split(separator: "\n").map {
                $0.split(separator: ",", omittingEmptySubsequences: false)
            }
            let header = rows.first?.map(String.init) ?? []
            for (type, column) in [
                (DataType.power, "power_w"), (.cadence, "cadence_rpm"), (.speed, "speed_m_per_s"),
                (.hr, "heart_rate_bpm"),
            ] {
                let index = try XCTUnwrap(header.firstIndex(of: column), "\(header)")
                let filled = rows.dropFirst().filter { $0.count > index && !$0[index].isEmpty }.count
                if withheld.contains(type) {
                    XCTAssertEqual(filled, 0, "\(what): \(column) filled")
                } else if type != .cadence {
                    XCTAssertGreaterThan(filled, 1000, "\(what): \(column) empty")
                }
            }
            let tcx = try get(port, "/api/v1/workouts/\(id)/export.tcx", token: token)
            XCTAssertEqual(tcx.status, 200)
            XCTAssertEqual(tcx.body.contains("<HeartRateBpm>"), granted.contains(.hr), what)
            XCTAssertEqual(tcx.body.contains("Watts>"), granted.contains(.power), what)
            // The journal holds every sensor's bytes whole: only with every measurement type.
            let journalAnswer = try get(port, "/api/v1/workouts/\(id)/export.journal", token: token)
            XCTAssertEqual(journalAnswer.status, withheld.isEmpty ? 200 : 404, what)
            if withheld.isEmpty {
                XCTAssertTrue(journalAnswer.body.contains(" 2a37 "), "the whole journal, the strap's bytes with it")
            }

            // Garmin's FIT SDK reads the FIT served: heart rate in no record, lap or session without hr.
            if withheld.isSubset(of: [.hr, .intake]) {
                let fit = Data(try get(port, "/api/v1/workouts/\(id)/export.fit", token: token).bytes)
                let path = URL(fileURLWithPath: database).deletingLastPathComponent()
                    .appendingPathComponent("served-\(combination).fit").path
                try fit.write(to: URL(fileURLWithPath: path))
                XCTAssertGreaterThan(fit.count, 10_000, "\(what): the FIT served")
                let read = try readExport("fit", path)
                XCTAssertEqual(read["integrity"] as? Bool, true)
                let messages = ["records", "laps", "sessions"].flatMap { read[$0] as? [[String: Any]] ?? [] }
                let withHeartRate = messages.filter { message in
                    message.contains { $0.key.contains("heart_rate") && !($0.value is NSNull) }
                }
                if granted.contains(.hr) {
                    XCTAssertGreaterThan(withHeartRate.count, 1000, "the whole ride's heart rate")
                } else {
                    XCTAssertEqual(withHeartRate.count, 0, "heart rate in the FIT of a device without hr")
                }
            }
        }

        // Without the history none of its routes is there, as on a mirror that serves none.
        guard thenWithoutHistory else { return }
        let live = try XCTUnwrap(
            try runMirror(["pair", "--name", "live only", "--types", "power,hr,ride", "--token", "--json"], bus)
                .jsonObject["token"] as? String)
        for route in routes + pictures + ["/api/v1/workouts/\(id)/export.fit"] {
            let answer = try get(port, route, token: live)
            XCTAssertEqual(answer.status, 404, "\(route): \(answer.body)")
            XCTAssertFalse(answer.body.contains("denied") || answer.body.contains("grant"), answer.body)
        }
    }

    /// The live side with a power meter and a heart-rate strap streaming: a screen granted power sees no heart
    /// rate in its snapshot, readings or status; `grant +hr` shows it within 1 s on the open stream, `grant -hr`
    /// takes it away as fast; each control needs its own type.
    func testAGrantChangedOnAnOpenStreamTakesEffectWithinASecond() async throws {
        let standIn = try StandIn(sensors: [StandIn.power, StandIn.heartRate])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("grants.sqlite").path
        let record = try Cyclelog(
            ["record", "--wait", "--plain", "--sensor", "Stages Power L", "--sensor", "Polar H10", "--db", database],
            standIn: standIn)
        defer { record.signal(SIGTERM) }
        try await waitFor("the recorder on the bus", record) {
            try await standIn.busNameOwner(RecorderControl.busName) != nil
        }
        let (mirror, port) = try await startMirror(bus: standIn.bus, listen: "127.0.0.1:0", extra: ["--db", database])
        defer { mirror.signal(SIGTERM) }
        let token = try XCTUnwrap(
            try runMirror(["pair", "--name", "wall", "--types", "power", "--token", "--json"], standIn.bus)
                .jsonObject["token"] as? String)
        let stream = try openStream(port, token: token)

        // Until heart rate is granted: power arrives, heart rate never (by key, on every message).
        var powers = 0
        let quiet = Date().addingTimeInterval(4)
        while Date() < quiet, let message = stream.nextEvent(seconds: 2) {
            XCTAssertFalse(message.data.contains("heartRate"), "heart rate reached the wall: \(message.data)")
            XCTAssertFalse(message.data.contains("cadenceRPM"), message.data)
            if message.event == "live", message.data.contains("\"powerWatts\"") { powers += 1 }
        }
        XCTAssertGreaterThan(powers, 4, "the meter's values, at its 4 Hz")
        let status = try get(port, "/api/v1/status", token: token)
        XCTAssertEqual(status.status, 200)
        XCTAssertFalse(status.body.contains("heartRate"), status.body)

        // Granted on the open stream: a reading with heart rate within 1 s of the command's answer.
        let granted = try runMirror(["grant", "wall", "+hr"], standIn.bus)
        let grantedAt = Date()
        XCTAssertTrue(granted.contains("wall may now see and do: power,hr"), granted)
        var firstHeartRate: Date?
        while firstHeartRate == nil, Date().timeIntervalSince(grantedAt) < 3,
            let message = stream.nextEvent(seconds: 3)
        {
            if message.event == "live" || message.event == "snapshot", message.data.contains("\"heartRateBPM\"") {
                firstHeartRate = Date()
            }
        }
        let shownAfter = try XCTUnwrap(firstHeartRate, "no heart rate after the grant").timeIntervalSince(grantedAt)
        XCTAssertLessThan(shownAfter, 1, "heart rate shown \(shownAfter) s after the grant")

        // Taken again: the next snapshot has none, and nothing after it.
        _ = try runMirror(["grant", "wall", "-hr"], standIn.bus)
        let takenAt = Date()
        var snapshotAfter: Date?
        while snapshotAfter == nil, Date().timeIntervalSince(takenAt) < 3, let message = stream.nextEvent(seconds: 3) {
            if message.event == "snapshot" {
                XCTAssertFalse(message.data.contains("heartRate"), message.data)
                snapshotAfter = Date()
            }
        }
        XCTAssertLessThan(try XCTUnwrap(snapshotAfter, "no snapshot after -hr").timeIntervalSince(takenAt), 1)
        let after = Date().addingTimeInterval(3)
        while Date() < after, let message = stream.nextEvent(seconds: 2) {
            XCTAssertFalse(message.data.contains("heartRate"), "heart rate after -hr: \(message.data)")
        }

        // `devices` lists what each was granted; a page that asked for more shows it asked.
        let offer = try pairOffer(standIn.bus, types: "power,ride")
        let paired = try HTTPConnection.request(
            port: port, "POST", "/api/v1/pair", headers: ["Content-Type": "application/json"],
            body: #"{"code":"\#(offer.code)","name":"tablet","types":"control,hr"}"#)
        XCTAssertEqual(paired.status, 200, paired.body)
        XCTAssertEqual(paired.json["types"] as? [String], ["power", "ride"], paired.body)
        let devices = try runMirror(["devices"], standIn.bus)
        XCTAssertTrue(devices.contains("wall  power  paired"), devices)
        XCTAssertTrue(devices.contains("tablet  power,ride  paired"), devices)
        XCTAssertTrue(devices.contains("asked also for cadence,speed,hr,energy,history,intake,trainer"), devices)

        // Writes are types too: the wall (power only) may not lap, the tablet may lap but not log water.
        let tablet = try XCTUnwrap(paired.json["token"] as? String)
        let lap = #"{"requestId":"l-1","command":"lap"}"#
        let wallLap = try post(port, "/api/v1/control", token: token, json: lap)
        XCTAssertEqual(wallLap.status, 403, wallLap.body)
        let water = #"{"requestId":"w-1","command":"intake","args":{"kind":"water","amount":250,"unit":"ml"}}"#
        let tabletWater = try post(port, "/api/v1/control", token: tablet, json: water)
        XCTAssertEqual(tabletWater.status, 403, tabletWater.body)
        XCTAssertTrue(tabletWater.body.contains("grant"), tabletWater.body)
        // A start with the hub re-broadcasts every sensor, heart rate too, to any app in Bluetooth range and lets
        // them steer the trainer: the tablet (power and the ride) may not ask for it.
        let hubStart = try post(
            port, "/api/v1/control", token: tablet, json: #"{"requestId":"s-0","command":"start","args":{"hub":true}}"#)
        XCTAssertEqual(hubStart.status, 403, hubStart.body)
        XCTAssertTrue(hubStart.body.contains("not granted cadence, which a start with the hub needs"), hubStart.body)
        let start = try post(port, "/api/v1/control", token: tablet, json: #"{"requestId":"s-1","command":"start"}"#)
        XCTAssertEqual(start.status, 200, start.body)
    }

    /// Every value under one of `keys` anywhere in a JSON value that is there (not null, not an empty object or
    /// array, not a distance of 0).
    static func valuesUnder(_ keys: Set<String>, in value: Any) -> [String] {
        var found: [String] = []
        func walk(_ value: Any, _ key: String?) {
            if let key, keys.contains(key) {
                switch value {
                case is NSNull: return
                case let object as [String: Any] where object.isEmpty: return
                case let array as [Any] where array.allSatisfy({ $0 is NSNull }): return
                case let number as Double where number == 0 && key.hasPrefix("distance"): return
                case let array as [Any] where key.hasPrefix("distance") && array.allSatisfy({ ($0 as? Double) == 0 }):
                    return
                default:
                    found.append("\(key): \(String(describing: value).prefix(80))")
                    return
                }
            }
            if let object = value as? [String: Any] {
                for (key, value) in object { walk(value, key) }
            } else if let array = value as? [Any] {
                for item in array { walk(item, nil) }
            }
        }
        walk(value, nil)
        return found
    }
}
