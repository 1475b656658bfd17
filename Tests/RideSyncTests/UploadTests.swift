import Foundation
import RideTestSupport
import TestSupport
import Testing
import WorkoutStore

@testable import RideUploads

/// `cyclelog-sync account`, `upload`, `plans` and `sync` against the stand-in of intervals.icu's and Strava's APIs,
/// which checks every request as the real services would (Tests/ServiceStandIn).
@Suite("uploads to intervals.icu and Strava")
struct UploadTests {
    @Test("intervals.icu: a key others can read is refused; each ride uploaded once; a newer version replaces it")
    func intervals() async throws {
        let rig = try await UploadRig.made(rides: 2)
        let open = try rig.secretFile("open-key", ServiceStandIn.apiKey, mode: 0o644)
        let refused = try await rig.sync([
            "account", "add", "intervals", "--athlete", ServiceStandIn.athlete, "--api-key-file", open, "--address",
            rig.standIn.address,
        ])
        #expect(refused.status == 2)
        #expect(refused.output.contains("can be read by other users") && refused.output.contains("chmod 600"))
        #expect(!refused.output.contains(ServiceStandIn.apiKey))
        let wrong = try rig.secretFile("wrong-key", "notthekey0000")
        let rejected = try await rig.sync([
            "account", "add", "intervals", "--athlete", ServiceStandIn.athlete, "--api-key-file", wrong, "--address",
            rig.standIn.address,
        ])
        #expect(rejected.status == 1 && rejected.output.contains("refused this API key"))
        // Plain http to another machine would carry the key in clear.
        let clear = try await rig.sync([
            "account", "add", "intervals", "--athlete", ServiceStandIn.athlete, "--api-key-file", wrong, "--address",
            "http://intervals.icu",
        ])
        #expect(clear.status == 64 && clear.output.contains("use https"))
        try await rig.addIntervals()
        var info = stat()
        #expect(stat(rig.folder + "/accounts/intervals.json", &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(rig.folder + "/accounts", &info) == 0 && info.st_mode & 0o777 == 0o700)
        let list = try await rig.sync(["account", "list"])
        #expect(
            list.output.contains("athlete \(ServiceStandIn.athlete)") && !list.output.contains(ServiceStandIn.apiKey))

        let waiting = try await rig.sync(["upload", "--status"])
        #expect(waiting.output.components(separatedBy: "waits to be uploaded").count == 3)
        #expect(waiting.output.contains("intervals.icu: 0 rides uploaded, 2 rides wait (`--all` lists every ride)."))
        let first = try await rig.sync(["upload"])
        #expect(first.status == 0, "\(first.output)")
        var activities = try rig.standIn.activities("intervals")
        #expect(
            Set(activities.compactMap { $0["external_id"] as? String }) == [
                try rig.externalId(1), try rig.externalId(2),
            ])
        #expect(activities.allSatisfy { $0["description"] as? String == "Recorded with cyclelog." })
        let again = try await rig.sync(["upload"])
        #expect(again.status == 0 && again.output.contains("Nothing to upload."))
        #expect(try rig.standIn.activities("intervals").count == 2)
        // In short, the rides that are done are counted, not named; `--all` names each.
        let done = try await rig.sync(["upload", "--status"]).output
        #expect(done == "intervals.icu: 2 rides uploaded (`--all` lists every ride).\n", "\(done)")
        let each = try await rig.sync(["upload", "--status", "--all"]).output
        #expect(each.components(separatedBy: "→ intervals: uploaded as ").count == 3, "\(each)")

        // A renamed ride is its next version: intervals.icu's activity is replaced, not doubled.
        #expect(try rig.collector.store.rename(1, to: "Hill repeats"))
        let replaced = try await rig.sync(["upload"])
        #expect(replaced.status == 0 && replaced.output.contains("version 2 replaced activity"), "\(replaced.output)")
        activities = try rig.standIn.activities("intervals")
        #expect(activities.count == 2)
        let renamed = activities.first { $0["external_id"] as? String == (try? rig.externalId(1)) }
        #expect(renamed?["name"] as? String == "Hill repeats")
        #expect(try rig.externalId(1).hasSuffix("-v2"))
        // Asked by id, a ride already there is said to be there and is not sent again.
        let named = try await rig.sync(["upload", "2"])
        #expect(named.output.contains("already on intervals.icu"))
        #expect(try rig.standIn.violations() == [])
        #expect(try rig.standIn.activities("intervals").count == 2)

        // Deleting a ride here leaves its activity, unless asked.
        #expect(try rig.collector.store.delete(2))
        #expect(try await rig.sync(["upload"]).output.contains("Nothing to upload."))
        #expect(try rig.standIn.activities("intervals").count == 2)
        let deleted = try await rig.sync(["upload", "--delete-remote"])
        #expect(deleted.status == 0 && deleted.output.contains("deleted from intervals.icu"), "\(deleted.output)")
        #expect(try rig.standIn.activities("intervals").count == 1)
        #expect(try await rig.sync(["upload", "--delete-remote"]).output.contains("Nothing to upload."))

        let removed = try await rig.sync(["account", "remove", "intervals"])
        #expect(removed.status == 0 && removed.output.contains("Revoke the key itself"))
        #expect(!FileManager.default.fileExists(atPath: rig.folder + "/accounts/intervals.json"))
        #expect(try await rig.sync(["account", "list"]).output.contains("No accounts"))
    }

    /// Rides on 1, 2 and 3 January 2000 at 08:00 UTC; each way of naming rides sends those it names and no other.
    @Test("`upload last`, `upload --since DAY` and `upload ID` send the rides they name, and no other")
    func namedRides() async throws {
        let rig = try await UploadRig.made(rides: 3)
        try await rig.addIntervals()
        func uploaded() throws -> Set<String> {
            Set(try rig.standIn.activities("intervals").compactMap { $0["external_id"] as? String })
        }
        let last = try await rig.sync(["upload", "last"])
        #expect(last.status == 0, "\(last.output)")
        #expect(try uploaded() == [try rig.externalId(3)])
        let since = try await runProgram(
            try builtBinary("cyclelog-sync").path, ["upload", "--since", "2000-01-02", "--db", rig.collector.path],
            environment: ["TZ": "UTC"])
        #expect(since.status == 0 && since.output.contains("already on intervals.icu"), "\(since.output)")
        #expect(try uploaded() == [try rig.externalId(2), try rig.externalId(3)])
        let missing = try await rig.sync(["upload", "7"])
        #expect(missing.status != 0 && missing.output.contains("workout 7 is not a complete ride recorded here"))
        #expect(try uploaded().count == 2)
        let first = try await rig.sync(["upload", "1"])
        #expect(first.status == 0, "\(first.output)")
        #expect(try uploaded() == Set(try (1...3).map { try rig.externalId($0) }))
        #expect(try rig.standIn.violations() == [])
    }

    @Test("Strava: OAuth through the loopback (a stranger refused), asynchronous upload, details of a newer version")
    func strava() async throws {
        let rig = try await UploadRig.made(rides: 1)
        try await rig.addStrava(stranger: { port in
            let stranger = try HTTPConnection.request(port: port, "GET", "/authorized?code=stolen&state=guess")
            #expect(stranger.status == 400)
        })
        let account = try String(contentsOfFile: rig.folder + "/accounts/strava.json", encoding: .utf8)
        #expect(account.contains("refreshToken"))
        let uploaded = try await rig.sync(["upload", "--to", "strava"])
        #expect(uploaded.status == 0, "\(uploaded.output)")
        #expect(uploaded.output.contains("uploaded to Strava as activity"))
        var activities = try rig.standIn.activities("strava")
        let firstVersion = try rig.externalId(1)
        #expect(activities.count == 1 && activities.first?["external_id"] as? String == firstVersion)

        #expect(try rig.collector.store.rename(1, to: "Tempo"))
        let details = try await rig.sync(["upload"])
        #expect(details.output.contains("Strava keeps version 1's file"), "\(details.output)")
        activities = try rig.standIn.activities("strava")
        #expect(activities.count == 1 && activities.first?["name"] as? String == "Tempo")
        let status = try await rig.sync(["upload", "--status", "--all"])
        #expect(status.output.contains("its API cannot replace a file"))

        // Uploaded again on request: Strava says it has the ride, which is recorded as that activity.
        let database = try WorkoutStore(path: rig.collector.path)
        var row = try #require(try database.remoteUpload(try rig.syncIdentifier(1), service: "strava"))
        row.state = .failed
        try database.saveRemoteUpload(row)
        let duplicate = try await rig.sync(["upload", "1", "--to", "strava"])
        #expect(duplicate.output.contains("Strava already had it"), "\(duplicate.output)")
        #expect(try rig.standIn.activities("strava").count == 1)

        // A revoked authorization says what to do.
        try rig.standIn.control("revoke")
        #expect(try rig.collector.store.rename(1, to: "Tempo, revoked"))
        let revoked = try await rig.sync(["upload", "--to", "strava"])
        #expect(revoked.status == 1)
        #expect(revoked.output.contains("`cyclelog-sync account add strava` again"), "\(revoked.output)")
        #expect(try rig.standIn.violations() == [])

        // Strava's API deletes nothing: a ride deleted here is named with the address to delete it by hand.
        #expect(try rig.collector.store.delete(1))
        let kept = try await rig.sync(["upload", "--delete-remote", "--to", "strava"])
        #expect(kept.output.contains("Strava's API cannot delete an activity"), "\(kept.output)")
        #expect(try rig.standIn.activities("strava").count == 1)
    }

    @Test("--without hr: each service's file has no heart rate (Garmin's FIT SDK reads it); status and list say so")
    func withoutHeartRate() async throws {
        let rig = try await UploadRig.made(rides: 0)
        // A real road ride with power, speed and a heart-rate strap (Fixtures/rides).
        try rig.ride("rides/sweatpy_4078723797.journal", onDay: 1)
        let key = try rig.secretFile("intervals-key", ServiceStandIn.apiKey)
        let intervals = [
            "account", "add", "intervals", "--athlete", ServiceStandIn.athlete, "--api-key-file", key, "--address",
            rig.standIn.address, "--since", "1990-01-01",
        ]
        let wrong = try await rig.sync(intervals + ["--without", "hr,history"])
        #expect(
            wrong.status == 64 && wrong.output.contains("--without takes what a ride's file holds"), "\(wrong.output)")
        let added = try await rig.sync(intervals + ["--without", "hr"])
        #expect(added.status == 0 && added.output.contains("Its files are sent without hr."), "\(added.output)")
        try await rig.addStrava()
        let edited = try await rig.sync(["account", "edit", "strava", "--without", "heart-rate"])
        #expect(edited.status == 0 && edited.output.contains("sent without hr"), "\(edited.output)")
        let list = try await rig.sync(["account", "list"])
        #expect(list.output.components(separatedBy: "files without hr").count == 3, "\(list.output)")
        let status = try await rig.sync(["upload", "--status"])
        #expect(status.output.contains("intervals.icu: rides are sent without hr"), "\(status.output)")
        #expect(status.output.contains("Strava: rides are sent without hr"), "\(status.output)")

        let uploaded = try await rig.sync(["upload"])
        #expect(uploaded.status == 0, "\(uploaded.output)")
        for service in ["intervals", "strava"] {
            let fields = try rig.standIn.activities(service).first?["fitFields"] as? [String] ?? []
            #expect(fields.contains("power") && fields.contains("distance"), "\(service): \(fields)")
            #expect(!fields.contains { $0.contains("heart_rate") }, "\(service): \(fields)")
        }
        // Sent whole from then on: the ride's next version replaces intervals.icu's, heart rate and all.
        let whole = try await rig.sync(["account", "edit", "intervals", "--without", "none"])
        #expect(whole.status == 0 && whole.output.contains("sent whole"), "\(whole.output)")
        #expect(try rig.collector.store.rename(1, to: "With heart rate"))
        let replaced = try await rig.sync(["upload", "--to", "intervals"])
        #expect(replaced.status == 0, "\(replaced.output)")
        let fields = try rig.standIn.activities("intervals").first?["fitFields"] as? [String] ?? []
        #expect(fields.contains("heart_rate") && fields.contains("avg_heart_rate"), "\(fields)")
        #expect(try rig.standIn.violations() == [])
    }

    @Test("50 seeded faults: cut connections, 5xx, 429, expired tokens, slow answers and killed runs; every ride once")
    func seededFaults() async throws {
        let rig = try await UploadRig.made(rides: 5)
        try await rig.addIntervals()
        try await rig.addStrava()
        var random = SplitMix64(seed: 43)
        let kinds = ["cut-before", "cut-after", "500", "503", "429", "slow", "hold", "expire"]
        let places = ["intervals-upload", "intervals", "strava-upload", "strava-status", "strava", "strava-token"]
        var faults: [[String: Any]] = []
        for _ in 0..<50 {
            let kind = kinds[Int(random.next() % UInt64(kinds.count))]
            // A run killed while Strava's token endpoint holds its answer is left out: a refresh token Strava
            // replaced and the run never kept cannot be got back (the rider adds the account again, as Strava says).
            let usable = kind == "hold" ? places.filter { $0 != "strava-token" } : places
            let place = kind == "expire" ? "strava" : usable[Int(random.next() % UInt64(usable.count))]
            faults.append(["match": place, "kind": kind, "seconds": kind == "slow" ? 3 : 30, "after": 1])
        }
        try rig.standIn.control("faults", faults)
        let binary = try builtBinary("cyclelog-sync").path
        var runs = 0
        var killed = 0
        var outputs: [String] = []
        var commandLines: [String] = []
        var renamed = false
        while runs < 80 {
            runs += 1
            if !renamed, runs == 4 {
                // New versions while faults go on: intervals.icu's activities are replaced, Strava's details set.
                #expect(try rig.collector.store.rename(2, to: "Renamed under faults"))
                #expect(try rig.collector.store.rename(4, to: "Renamed too"))
                renamed = true
            }
            let output = rig.folder + "/run-\(runs).out"
            let heldBefore = try rig.standIn.held()
            let pid = try spawnProgram(
                binary,
                ["upload", "--db", rig.collector.path, "--backoff", "0.01", "--reply-timeout", "2"],
                environment: ["CYCLELOG_LOG_LEVEL": "debug"], output: output)
            var status: Int32?
            while status == nil {
                var raw: Int32 = 0
                if waitpid(pid, &raw, WNOHANG) == pid {
                    status = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
                } else if try rig.standIn.held() > heldBefore {
                    // The service took the request and holds its answer: the process is killed mid-upload.
                    commandLines.append((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "")
                    kill(pid, SIGKILL)
                    _ = waitpid(pid, &raw, 0)
                    killed += 1
                    status = 137
                } else {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            outputs.append((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
            #expect([0, 75, 137].contains(status ?? -1), "run \(runs): \(outputs.last ?? "")")
            let left = try rig.standIn.state()["faultsLeft"] as? [Any] ?? []
            if left.isEmpty, status == 0, outputs.last?.contains("Nothing to upload.") == true { break }
        }
        let intervals = try rig.standIn.activities("intervals")
        let strava = try rig.standIn.activities("strava")
        let current = try (1...5).map { try rig.externalId(Int64($0)) }
        // Exactly once per service: one intervals.icu activity per ride at its current version, one Strava activity
        // per ride (Strava keeps the first file), none twice, none lost.
        #expect(intervals.count == 5 && Set(intervals.compactMap { $0["external_id"] as? String }) == Set(current))
        let statusText = try await rig.sync(["upload", "--status"]).output
        #expect(strava.count == 5, "\(statusText)")
        let stravaRides = Set(strava.compactMap { ($0["external_id"] as? String)?.split(separator: "-v").first })
        #expect(stravaRides.count == 5)
        #expect(try rig.standIn.violations() == [])
        #expect(killed > 0)
        let tally = Dictionary(grouping: faults.map { "\($0["kind"]!) at \($0["match"]!)" }, by: { $0 }).mapValues(
            \.count)
        print(
            "seeded faults: 50 injected (\(tally.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))), "
                + "\(runs) runs, \(killed) killed mid-upload; 5 rides on each service once")

        // No secret in any output, command line, the database or its log.
        var secrets = [ServiceStandIn.apiKey, ServiceStandIn.clientSecret] + (try rig.standIn.issued())
        secrets.append(Data("API_KEY:\(ServiceStandIn.apiKey)".utf8).base64EncodedString())
        var texts = outputs + commandLines
        for file in ["collector.sqlite", "collector.sqlite-wal"] {
            if let bytes = FileManager.default.contents(atPath: rig.folder + "/" + file) {
                texts.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        #expect(commandLines.count == killed && secrets.count > 4)
        for secret in secrets {
            #expect(!texts.contains { $0.contains(secret) }, "\(secret) was found")
        }
    }

    @Test("a service that quotes the request it refused does not make the key appear")
    func echoedSecretsRedacted() async throws {
        let rig = try await UploadRig.made(rides: 1)
        try await rig.addIntervals()
        try rig.standIn.control("faults", [["match": "intervals-upload", "kind": "echo"]])
        let refused = try await rig.sync(["upload"])
        #expect(refused.status == 1)
        #expect(refused.output.contains("REFUSED by intervals.icu: bad request with [secret]"), "\(refused.output)")
        #expect(!refused.output.contains(Data("API_KEY:\(ServiceStandIn.apiKey)".utf8).base64EncodedString()))
        let status = try await rig.sync(["status"])
        #expect(status.output.contains("Waiting to be uploaded to intervals.icu: 0 rides."))
        #expect(status.output.contains("workout 1 v1: REFUSED: bad request with [secret]"), "\(status.output)")
        let again = try await rig.sync(["upload", "1"])
        #expect(again.status == 0 && again.output.contains("uploaded to intervals.icu"), "\(again.output)")
    }

    @Test("unreachable: exit 75 in words, the ride waits in status with its last error")
    func unreachable() async throws {
        let rig = try await UploadRig.made(rides: 1)
        try await rig.addIntervals()
        try rig.standIn.control("faults", Array(repeating: ["match": "intervals-upload", "kind": "503"], count: 5))
        let failed = try await rig.sync(["upload", "--backoff", "0.01"])
        #expect(failed.status == 75, "\(failed.output)")
        #expect(failed.output.contains("intervals.icu failed (503); cyclelog-sync tries again later"))
        let status = try await rig.sync(["status", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
        let uploads = object?["uploads"] as? [[String: Any]]
        #expect(uploads?.first?["waiting"] as? Bool == true)
        #expect((uploads?.first?["lastError"] as? String)?.contains("503") == true)
        let later = try await rig.sync(["upload"])
        let uploaded = try rig.standIn.activities("intervals")
        #expect(later.status == 0 && uploaded.count == 1)
    }

    @Test("a redirect is not a refusal: not followed, said with where it pointed, the ride waits; both services said")
    func redirectAndBothServicesFailing() async throws {
        let rig = try await UploadRig.made(rides: 1)
        try await rig.addIntervals()
        try await rig.addStrava()
        try rig.standIn.control(
            "faults",
            [["match": "intervals-upload", "kind": "307"]]
                + Array(repeating: ["match": "strava-upload", "kind": "503"], count: 5))
        let failed = try await rig.sync(["upload", "--backoff", "0.01"])
        #expect(failed.status == 75, "\(failed.output)")
        #expect(
            failed.output.contains(
                "intervals.icu answered with a redirect (HTTP 307) to http://portal.example/login?next=%2Fapi, which "
                    + "cyclelog-sync does not follow"), "\(failed.output)")
        // Each service's outcome, in words: Strava's 503 too, not only the first service's.
        #expect(failed.output.contains("Strava failed (503); cyclelog-sync tries again later"), "\(failed.output)")
        #expect(!failed.output.contains("REFUSED"), "\(failed.output)")
        let status = try await rig.sync(["status"])
        #expect(!status.output.contains("REFUSED"), "\(status.output)")
        // Nothing was sent anywhere else, and the next run uploads the ride to both.
        let later = try await rig.sync(["upload"])
        #expect(later.status == 0, "\(later.output)")
        #expect(try rig.standIn.activities("intervals").count == 1)
        #expect(try rig.standIn.activities("strava").count == 1)
    }

    @Test("https: the service's certificate is checked; one signed by an authority not trusted gets nothing")
    func certificateChecked() async throws {
        let certificates = FileManager.default.temporaryDirectory.appendingPathComponent("upload-tls-\(UUID())").path
        try TestCertificates.make(in: certificates)
        let collector = try Collector()
        let standIn = try await ServiceStandIn.started([
            "--tls-cert", certificates + "/server.crt", "--tls-key", certificates + "/server.key",
        ])
        let rig = UploadRig(collector: collector, standIn: standIn)
        try rig.ride(Fixtures.journals[0], onDay: 1)
        let key = try rig.secretFile("intervals-key", ServiceStandIn.apiKey)
        let binary = try builtBinary("cyclelog-sync").path
        let trusted = ["CYCLELOG_SERVICE_CA_FILE": certificates + "/ca.crt"]
        let added = try await runProgram(
            binary,
            [
                "account", "add", "intervals", "--db", collector.path, "--athlete", ServiceStandIn.athlete,
                "--api-key-file", key, "--address", "https://localhost:\(standIn.port)", "--since", "1990-01-01",
            ], environment: trusted)
        #expect(added.status == 0 && added.output.contains("intervals.icu took the key"), "\(added.output)")
        let uploaded = try await runProgram(binary, ["upload", "--db", collector.path], environment: trusted)
        #expect(uploaded.status == 0 && uploaded.output.contains("uploaded to intervals.icu"), "\(uploaded.output)")
        try rig.ride(Fixtures.journals[1], onDay: 2)
        let stranger = try await runProgram(
            binary, ["upload", "--db", collector.path, "--backoff", "0.01"],
            environment: ["CYCLELOG_SERVICE_CA_FILE": certificates + "/other-ca.crt"])
        #expect(stranger.status == 75, "\(stranger.output)")
        #expect(stranger.output.contains("certificate is not one this machine trusts"), "\(stranger.output)")
        #expect(try standIn.activities("intervals").count == 1)
        #expect(try standIn.violations() == [])
    }

    @Test("plans: today's planned workout becomes the first suggestion, with the coach's description")
    func plans() async throws {
        let rig = try await UploadRig.made(rides: 0)
        try await rig.addIntervals()
        let today = LocalDay.today()
        let tomorrow = LocalDay.day(of: Date(), offset: 1)
        let zwo = { (name: String, power: String) in
            """
            <workout_file><name>\(name)</name><sportType>bike</sportType><workout>
            <Warmup Duration="600" PowerLow="0.50" PowerHigh="0.75"/>
            <SteadyState Duration="1200" Power="\(power)"/>
            <Cooldown Duration="300" PowerLow="0.60" PowerHigh="0.40"/>
            </workout></workout_file>
            """
        }
        try rig.standIn.control(
            "events",
            [
                [
                    "id": 9001, "category": "WORKOUT", "start_date_local": "\(today)T00:00:00", "name": "Sweet spot 20",
                    "description": "Keep it smooth, 90 rpm.", "type": "Ride", "zwo": zwo("Sweet spot 20", "0.90"),
                ],
                [
                    "id": 9002, "category": "WORKOUT", "start_date_local": "\(tomorrow)T00:00:00", "name": "Threshold",
                    "type": "Ride", "zwo": zwo("Threshold", "1.00"),
                ],
                ["id": 9003, "category": "NOTE", "start_date_local": "\(today)T00:00:00", "name": "Rest well"],
                ["id": 9004, "category": "WORKOUT", "start_date_local": "\(today)T00:00:00", "name": "Ride outside"],
            ])
        let plans = try await rig.sync(["plans"])
        #expect(plans.status == 0, "\(plans.output)")
        #expect(plans.output.contains("\(today) (today): Sweet spot 20"))
        #expect(plans.output.contains("skipped: Ride outside"))
        #expect(!plans.output.contains("Rest well"))
        let store = try WorkoutStore(path: rig.collector.path)
        let first = try #require(try store.presets().first)
        #expect(first.preset.id == "plan-9001" && first.preset.title == "Sweet spot 20")
        #expect(first.note == "Keep it smooth, 90 rpm." && first.plannedDay == today)
        let workoutId = try #require(first.preset.request.workout)
        let workout = try #require(try store.libraryWorkout(workoutId))
        #expect(workout.workout.steps.count == 3 && workout.workout.description == "Keep it smooth, 90 rpm.")
        #expect(try store.presets().contains { $0.preset.id == "plan-9002" && $0.plannedDay == tomorrow })
        // The coach moves a workout away: its suggestion goes; fetching again adds nothing twice.
        try rig.standIn.control("events", [] as [Any])
        let emptied = try await rig.sync(["plans"])
        #expect(emptied.output.contains("removed the suggestion plan-9001"))
        #expect(try !store.presets().contains { $0.preset.id.hasPrefix("plan-") })
        #expect(try rig.standIn.violations() == [])
    }

    @Test("sync: after the push, the rides that wait are uploaded; without the shared store too, exit 75")
    func syncUploadsAfterPush() async throws {
        let rig = try await UploadRig.made(rides: 1)
        try await rig.addIntervals()
        let address = try await initializedServer()
        let binary = try builtBinary("cyclelog-sync").path
        let synced = try await runProgram(
            binary, ["sync", "--db", rig.collector.path],
            environment: await PostgresServer.shared.environment(address.database))
        #expect(synced.status == 0, "\(synced.output)")
        #expect(synced.output.contains("pushed (new to the shared store)"))
        #expect(synced.output.contains("uploaded to intervals.icu"))
        #expect(try rig.standIn.activities("intervals").count == 1)
        // No shared store reachable: the uploads still go, the run says 75 for the timer.
        try rig.ride(Fixtures.journals[1], onDay: 2)
        let nowhere = ["PGHOST": FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID())").path]
        let cut = try await runProgram(binary, ["sync", "--db", rig.collector.path], environment: nowhere)
        #expect(cut.status == 75 && cut.output.contains("uploaded to intervals.icu"), "\(cut.output)")
        let only = try await runProgram(
            binary, ["sync", "--uploads-only", "--db", rig.collector.path], environment: nowhere)
        #expect(only.status == 0 && !only.output.contains("shared store"), "\(only.output)")
        #expect(try rig.standIn.activities("intervals").count == 2)
    }
}
