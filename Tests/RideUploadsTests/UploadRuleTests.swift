import Foundation
import GRDB
import RideTestSupport
import TestSupport
import Testing

@testable import RideUploads
@testable import WorkoutStore

/// The upload's rule, the retries and the pieces of HTTP, without a network: a scripted transport in its place.
@Suite("the upload rule")
struct UploadRuleTests {
    @Test("each state of a ride's row leads to one next step")
    func steps() {
        func row(_ state: RemoteUpload.State, version: Int = 1, details: Int? = nil) -> RemoteUpload {
            RemoteUpload(
                syncIdentifier: "A", service: "x", version: version, state: state, remoteId: "r1", uploadId: "u1",
                previousRemoteId: "r0", detailsVersion: details)
        }
        #expect(UploadPlan.step(service: .intervals, rideVersion: 1, record: nil) == .upload)
        #expect(UploadPlan.step(service: .intervals, rideVersion: 1, record: row(.sending)) == .lookUp(version: 1))
        #expect(UploadPlan.step(service: .strava, rideVersion: 1, record: row(.processing)) == .poll(uploadId: "u1"))
        #expect(UploadPlan.step(service: .intervals, rideVersion: 1, record: row(.uploaded)) == .nothing)
        #expect(
            UploadPlan.step(service: .intervals, rideVersion: 2, record: row(.uploaded))
                == .replace(previousRemoteId: "r1"))
        #expect(
            UploadPlan.step(service: .intervals, rideVersion: 2, record: row(.replacing, version: 2))
                == .replace(previousRemoteId: "r0"))
        #expect(
            UploadPlan.step(service: .strava, rideVersion: 2, record: row(.uploaded, details: 1))
                == .updateDetails(remoteId: "r1"))
        #expect(UploadPlan.step(service: .strava, rideVersion: 2, record: row(.uploaded, details: 2)) == .nothing)
        #expect(UploadPlan.step(service: .intervals, rideVersion: 1, record: row(.failed)) == .nothing)
        #expect(UploadPlan.step(service: .intervals, rideVersion: 1, record: row(.failed), again: true) == .upload)
        #expect(UploadPlan.step(service: .intervals, rideVersion: 2, record: row(.failed)) == .upload)
        #expect(
            UploadPlan.externalIdentifier("5E0C1B0A-0000-4000-8000-000000000001", version: 3)
                == "5e0c1b0a-0000-4000-8000-000000000001-v3")
    }

    @Test("Retry-After in seconds or as a date; 5xx, 408 and 429 are worth another try, 4xx is a refusal")
    func verdicts() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(RetryPolicy.retryAfterSeconds("7", now: now) == 7)
        // RFC 9110's example format, 90 s after `now`.
        let later = DateFormatter()
        later.locale = Locale(identifier: "en_US_POSIX")
        later.timeZone = TimeZone(identifier: "GMT")
        later.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        #expect(RetryPolicy.retryAfterSeconds(later.string(from: now.addingTimeInterval(90)), now: now) == 90)
        #expect(RetryPolicy.retryAfterSeconds("soon", now: now) == nil)
        let limited = ServiceResponse(status: 429, headers: [("retry-after", "12")])
        #expect(
            RetryPolicy.verdict(limited, now: now) == .transient(waitSeconds: 12, reason: "asked to slow down (429)"))
        #expect(
            RetryPolicy.verdict(ServiceResponse(status: 502), now: now)
                == .transient(waitSeconds: nil, reason: "failed (502)"))
        #expect(RetryPolicy.verdict(ServiceResponse(status: 401)) == .unauthorized)
        let refused = ServiceResponse(
            status: 400,
            body: Array(
                #"{"message":"Bad Request","errors":[{"resource":"Upload","field":"file","code":"empty"}]}"#.utf8))
        #expect(RetryPolicy.verdict(refused) == .refused("Bad Request (Upload file empty)"))
        var policy = RetryPolicy()
        policy.longestBackoffSeconds = 8
        #expect((1...6).map { policy.backoffSeconds(afterFailures: $0) } == [1, 2, 4, 8, 8, 8])
    }

    @Test("Strava's upload answers: still reading, an activity, a duplicate of another, an error")
    func stravaStatus() {
        #expect(Strava.status(of: ["id": 1, "status": "Your activity is still being processed."]) == .processing)
        #expect(Strava.status(of: ["id": 1, "activity_id": 77]) == .ready(activityId: "77"))
        #expect(
            Strava.status(of: ["error": "ride.fit duplicate of activity 12345678901"])
                == .duplicate(activityId: "12345678901"))
        #expect(
            Strava.status(of: ["error": "ride.fit duplicate of <a href='/activities/42' target='_blank'>activity</a>"])
                == .duplicate(activityId: "42"))
        #expect(Strava.status(of: ["error": "Improperly formatted data."]) == .failed("Improperly formatted data."))
    }

    @Test("plain http only to this machine; forms and queries percent-encoded; a multipart body as RFC 7578 has it")
    func addressesAndBodies() throws {
        #expect(throws: ServiceAddress.Refused.self) { try ServiceAddress("http://intervals.icu") }
        #expect(throws: ServiceAddress.Refused.self) { try ServiceAddress("https://user:pw@intervals.icu") }
        let local = try ServiceAddress("http://127.0.0.1:8080/base/")
        #expect(!local.secure && local.port == 8080 && local.basePath == "/base")
        #expect(try ServiceAddress("https://www.strava.com").description == "https://www.strava.com")
        #expect(
            FormEncoding.encode([("name", "Zone 2 & tempo"), ("x", "ä/=")])
                == "name=Zone%202%20%26%20tempo&x=%C3%A4%2F%3D")
        #expect(FormEncoding.decode("a=1%202&b=c+d&e").map { "\($0.0)=\($0.1)" } == ["a=1 2", "b=c d", "e="])
        var form = MultipartForm(boundary: "XyZ")
        form.add(field: "data_type", "fit")
        form.add(file: "file", fileName: "ride\".fit", contentType: "application/octet-stream", [0, 1, 2])
        let expected =
            "--XyZ\r\nContent-Disposition: form-data; name=\"data_type\"\r\n\r\nfit\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"ride_.fit\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n\u{0}\u{1}\u{2}\r\n--XyZ--\r\n"
        #expect(form.finished == Array(expected.utf8))
    }

    @Test("an upload whose answer was lost is looked up before it is sent again; Retry-After is waited for")
    func lostAnswerLookedUpFirst() async throws {
        let (collector, folder) = try oneRideWithAnAccount()
        let transport = ScriptedTransport([
            .failure(TransportFailure(description: "cut", mayHaveArrived: true)),
            .response(ServiceResponse(status: 200, body: Array("[]".utf8))),
            .response(ServiceResponse(status: 429, headers: [("Retry-After", "7")])),
            .response(ServiceResponse(status: 200, body: Array("[]".utf8))),
            .response(ServiceResponse(status: 201, body: Array(#"{"id":"i9"}"#.utf8))),
        ])
        let waits = Waits()
        var uploader = Uploader(store: collector.store, folder: folder)
        uploader.reach.transport = transport
        uploader.reach.pause = { await waits.add($0) }
        let report = try await uploader.run([.intervals], choice: .automatic)
        #expect(report.outcomes.map(\.result) == [.uploaded] && report.failures.isEmpty)
        #expect(transport.sent() == ["POST", "GET", "POST", "GET", "POST"])
        #expect(await waits.all == [1, 7])
        let row = try #require(try collector.store.remoteUploads().first)
        #expect(row.state == .uploaded && row.remoteId == "i9" && row.attempts == 0)
        // A run after it sends nothing.
        let again = try await uploader.run([.intervals], choice: .automatic)
        #expect(again.outcomes.isEmpty && transport.sent().count == 5)
    }

    @Test("answers a lying server may send: garbage, a book, a 201 without an id (looked up, not trusted)")
    func hostileAnswers() async throws {
        var random = SplitMix64(seed: 4343)
        for _ in 0..<5000 {
            let bytes = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(RetryPolicy.message(ServiceResponse(status: 400, body: bytes)).count <= 301)
            _ = FormEncoding.decode(Substring(text))
            _ = Strava.duplicateActivity("duplicate of " + text)
            _ = RetryPolicy.retryAfterSeconds(text, now: Date())
        }
        let book =
            Array(#"{"message":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: 1_000_000) + Array(#""}"#.utf8)
        #expect(RetryPolicy.message(ServiceResponse(status: 400, body: book)).count == 301)
        let (collector, folder) = try oneRideWithAnAccount()
        let transport = ScriptedTransport([
            .response(ServiceResponse(status: 201, body: Array("<html>ok</html>".utf8))),
            .response(ServiceResponse(status: 200, body: Array(#"[{"id":"i5","external_id":"x"}]"#.utf8))),
            .response(ServiceResponse(status: 201, body: Array(#"{"id":"i6"}"#.utf8))),
        ])
        var uploader = Uploader(store: collector.store, folder: folder)
        uploader.reach.transport = transport
        uploader.reach.pause = { _ in }
        let report = try await uploader.run([.intervals], choice: .automatic)
        #expect(transport.sent() == ["POST", "GET", "POST"])
        #expect(report.outcomes.first?.words == "uploaded to intervals.icu as activity i6")
    }

    @Test("an upload Strava has forgotten (404) is looked up by its external id, then sent again")
    func forgottenStravaUpload() async throws {
        let collector = try Collector()
        try collector.replay(Fixtures.journals[0])
        let folder = AccountFolder(path: (collector.path as NSString).deletingLastPathComponent + "/accounts")
        try folder.save(
            StravaAccount(
                clientId: "1", clientSecret: "secret-1", refreshToken: "refresh-1", accessToken: "access-1",
                expiresAt: Int64(Date().timeIntervalSince1970) + 3600, athlete: "7",
                address: "https://strava.example", addedMicroseconds: 0))
        let transport = ScriptedTransport([
            .response(ServiceResponse(status: 201, body: Array(#"{"id":5,"id_str":"5","status":"processing"}"#.utf8))),
            .response(ServiceResponse(status: 404, body: Array(#"{"message":"Record Not Found"}"#.utf8))),
            .response(ServiceResponse(status: 200, body: Array("[]".utf8))),
            .response(ServiceResponse(status: 201, body: Array(#"{"id":6,"activity_id":77}"#.utf8))),
        ])
        var uploader = Uploader(store: collector.store, folder: folder)
        uploader.reach.transport = transport
        uploader.reach.pause = { _ in }
        let report = try await uploader.run([.strava], choice: .automatic)
        #expect(transport.sent() == ["POST", "GET", "GET", "POST"])
        #expect(report.outcomes.first?.words == "uploaded to Strava as activity 77", "\(report)")
    }

    @Test("a token refused again after a try that failed is renewed again; refused right after a renewal, it is not")
    func renewedAgainAfterAFailedTry() async throws {
        let renewals = Waits()
        func client(_ transport: ScriptedTransport) throws -> ServiceClient {
            var reach = ServiceReach()
            reach.transport = transport
            reach.pause = { _ in }
            return ServiceClient(
                service: .strava, address: try ServiceAddress("https://strava.example"), reach: reach,
                authorization: { "Bearer token" },
                reauthorize: {
                    await renewals.add(1)
                    return true
                },
                redaction: { Redaction([]) })
        }
        // The token expired; the try with the renewed one got no answer in time, and its request, carried out
        // all the same, let that token expire too (as the stand-in's `expire` does): renewed once more.
        let expiredMeanwhile = ScriptedTransport([
            .response(ServiceResponse(status: 401)),
            .failure(TransportFailure(description: "127.0.0.1 did not answer within 2 s", mayHaveArrived: true)),
            .response(ServiceResponse(status: 401)),
            .response(ServiceResponse(status: 200, body: Array("[]".utf8))),
        ])
        let answer = try await client(expiredMeanwhile).expect(ServiceRequest(.GET, "/api/v3/athlete"), doing: "read")
        #expect(answer.status == 200)
        #expect(expiredMeanwhile.sent() == ["GET", "GET", "GET", "GET"])
        #expect(await renewals.all.count == 2)
        // Refused again right after a renewal: the authorization was revoked, said as such.
        let revoked = ScriptedTransport([
            .response(ServiceResponse(status: 401)), .response(ServiceResponse(status: 401)),
        ])
        await #expect(throws: UploadError.self) {
            _ = try await client(revoked).expect(ServiceRequest(.GET, "/api/v3/athlete"), doing: "read")
        }
        #expect(revoked.sent() == ["GET", "GET"])
        #expect(await renewals.all.count == 3)
    }

    /// Rides on 1, 2 and 3 January 2024; the intervals.icu account added on the 2nd (its rides from then on), the
    /// Strava one after the last; the first ride uploaded to intervals.icu on request before that. The status names
    /// the rides each service covers and every ride with a row, and nothing else; without an account, nothing.
    @Test("the status names the rides each account covers and those with a row, read alone")
    func statusRides() throws {
        let store = try StoredRides.store(
            journals: (1...3).map { Journals.power(Array(repeating: 150, count: 60), day: $0) })
        let rides = try store.uploadableRides()
        #expect(rides.map(\.id) == [1, 2, 3])
        let folder = AccountFolder(
            path: FileManager.default.temporaryDirectory.appendingPathComponent("acc-\(UUID())").path)
        #expect(try UploadStatus.of(store, folder) == [])
        try folder.save(
            IntervalsAccount(
                athlete: "i1", apiKey: "k", address: "https://intervals.icu",
                addedMicroseconds: rides[1].startMicroseconds))
        try folder.save(
            StravaAccount(
                clientId: "1", clientSecret: "s", refreshToken: "r", accessToken: nil, expiresAt: 0, athlete: nil,
                address: "https://www.strava.com", addedMicroseconds: rides[2].startMicroseconds + 1))
        try store.saveRemoteUpload(
            RemoteUpload(
                syncIdentifier: rides[0].syncIdentifier.uppercased(), service: "intervals", version: 1,
                state: .uploaded, remoteId: "i99"))
        let statuses = try UploadStatus.of(store, folder)
        #expect(
            statuses.map { "\($0.service.rawValue) \($0.rideId)" } == ["intervals 1", "intervals 2", "intervals 3"])
        #expect(statuses.first?.waiting == false && statuses.dropFirst().allSatisfy(\.waiting))
        #expect(
            try store.uploadableRides(startedFrom: rides[1].startMicroseconds, orUploadedTo: ["strava"]).map(\.id)
                == [2, 3])
        #expect(try store.uploadableRides(startedFrom: Int64.max, orUploadedTo: ["intervals"]).map(\.id) == [1])
        // Rides named by id: those that are uploadable, however many ids (more than a statement's variables).
        #expect(try store.uploadableRides(ids: [3, 1, 99]).map(\.id) == [1, 3])
        #expect(try store.uploadableRides(ids: []).isEmpty)
        #expect(try store.uploadableRides(ids: Array(1...40_000)).map(\.id) == [1, 2, 3])
        #expect(try store.newestUploadableRide()?.id == 3)
        // A ride whose identity is stored in upper case (migration v15 left one where both spellings were stored)
        // is the ride its row names, as identities are compared everywhere else.
        try store.queue.write { db in
            try db.execute(sql: "UPDATE workout SET syncIdentifier = upper(syncIdentifier) WHERE id = 1")
        }
        #expect(try store.uploadableRides(startedFrom: Int64.max, orUploadedTo: ["intervals"]).map(\.id) == [1])
        #expect(try UploadStatus.of(store, folder).map(\.rideId) == [1, 2, 3])
        // Both halves are read through an index (the start's, the identities'), never by reading every ride.
        let plan = try store.queue.read { db in
            try Row.fetchAll(
                db,
                sql: "EXPLAIN QUERY PLAN " + WorkoutStore.uploadableQuery(WorkoutStore.startedFrom(orUploadedTo: 1)),
                arguments: [0, "intervals"]
            ).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.hasPrefix("SEARCH workout USING INDEX workoutByStart (startMicroseconds>?)") })
        #expect(plan.contains { $0.hasPrefix("SEARCH workout USING INDEX workoutUploadableByIdentity") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN workout") }, "\(plan)")
    }

    @Test("the rule's nothing-to-do in SQL agrees with the rule on every row; the rides it leaves are not read")
    func settledInSQL() throws {
        let store = try StoredRides.store(
            journals: (1...2).map { Journals.power(Array(repeating: 150, count: 60), day: $0) })
        let rides = try store.uploadableRides()
        let (ride, before) = (rides[1], rides[0])
        try store.setVersion(ride.id, 3)
        for service in Service.allCases {
            let since = ride.startMicroseconds
            func unsettled() throws -> [Int64] {
                try store.unsettledUploadableRides(
                    startedFrom: since, service: service.rawValue, settled: UploadPlan.settled(service)
                ).rides.map(\.id)
            }
            // No row: to be uploaded, if the account covers it (the older ride started before the account).
            #expect(try unsettled() == [ride.id])
            for state in RemoteUpload.State.allCases {
                for version in 2...4 {
                    for remoteId in [nil, "r1"] {
                        for details in [nil, 2, 3, 4] {
                            let row = RemoteUpload(
                                syncIdentifier: ride.syncIdentifier, service: service.rawValue, version: version,
                                state: state, remoteId: remoteId, uploadId: "u1", previousRemoteId: "r0",
                                detailsVersion: details)
                            try store.saveRemoteUpload(row)
                            let rule = UploadPlan.step(service: service, rideVersion: 3, record: row) != .nothing
                            #expect(
                                try unsettled() == (rule ? [ride.id] : []),
                                "\(service) \(state) v\(version) \(remoteId ?? "-") details \(details ?? 0)")
                        }
                    }
                }
            }
            // A row makes a ride covered whenever it started; settled, it is left out too.
            try store.saveRemoteUpload(
                RemoteUpload(
                    syncIdentifier: before.syncIdentifier, service: service.rawValue, version: 1, state: .sending))
            #expect(try unsettled() == [before.id])
        }
        // Read through the indexes of the covered rides and the rows' key, never by reading every ride.
        let plan = try store.queue.read { db in
            try Row.fetchAll(
                db,
                sql: "EXPLAIN QUERY PLAN "
                    + WorkoutStore.unsettledQuery(UploadPlan.settled(.strava), changedAfterMark: false),
                arguments: [0, "strava", "strava"]
            ).map { $0["detail"] as String }
        }
        #expect(!plan.contains { $0.hasPrefix("SCAN workout") }, "\(plan)")
        #expect(
            plan.contains {
                $0.hasPrefix("SEARCH u USING INDEX sqlite_autoindex_remoteUpload_1 (syncIdentifier=? AND service=?)")
            },
            "\(plan)")
    }

    @Test("after a run that settled every ride, the next reads the rides changed since and the rows under way")
    func settledMark() async throws {
        let (collector, folder) = try oneRideWithAnAccount()
        for journal in Fixtures.journals[1...2] { try collector.replay(journal) }
        let store = collector.store
        let rides = try store.uploadableRides()
        #expect(rides.count == 3)
        func unsettled(since: Int64 = 0) throws -> WorkoutStore.UnsettledRides {
            try store.unsettledUploadableRides(
                startedFrom: since, service: "intervals", settled: UploadPlan.settled(.intervals))
        }
        // The database itself, as SQL (the test's synchronous reads and writes).
        func number(_ sql: String, _ arguments: StatementArguments = []) throws -> Int64? {
            try store.queue.read { db in try Int64.fetchOne(db, sql: sql, arguments: arguments) }
        }
        func execute(_ sql: String, _ arguments: StatementArguments = []) throws {
            try store.queue.write { db in try db.execute(sql: sql, arguments: arguments) }
        }
        func plan(_ sql: String, _ arguments: StatementArguments) throws -> [String] {
            try store.queue.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] }
            }
        }
        func sequence(_ id: Int64) throws -> Int64 {
            try #require(try number("SELECT changeSequence FROM workout WHERE id = ?", [id]))
        }
        func mark() throws -> Int64? { try number("SELECT throughChange FROM uploadSettled") }
        // Each ride stored was numbered above every ride before it.
        let numbers = try rides.map { try sequence($0.id) }
        #expect(numbers == numbers.sorted() && Set(numbers).count == 3)
        let created = (1...3).map { ServiceResponse(status: 201, body: Array(#"{"id":"i\#($0)"}"#.utf8)) }
        let transport = ScriptedTransport(created.map { .response($0) })
        var uploader = Uploader(store: store, folder: folder)
        uploader.reach.transport = transport
        uploader.reach.pause = { _ in }
        #expect(try await uploader.run([.intervals], choice: .automatic).outcomes.count == 3)
        #expect(try mark() == numbers.max())
        #expect(try unsettled() == .init(rides: [], throughChange: numbers.max() ?? 0, markCurrent: true))
        // The mark is what is read: a row made unsettled behind the runs' back (only a run writes rows) is not
        // seen while its ride is unchanged, and is seen once the mark is for another start or gone.
        try execute(
            "UPDATE remoteUpload SET state = 'failed', version = 0 WHERE syncIdentifier = ?", [rides[0].syncIdentifier])
        #expect(try unsettled().rides.isEmpty)
        #expect(try unsettled(since: 1).rides.map(\.id) == [rides[0].id])
        try execute("UPDATE remoteUpload SET version = 1, state = 'uploaded'")
        // A change of the ride's version, status, identity or start numbers it again; of its sync marks or its name
        // alone (the upload rule reads neither), not.
        let before = try sequence(rides[1].id)
        try execute("UPDATE workout SET syncedVersion = 7, status = status, name = 'x' WHERE id = ?", [rides[1].id])
        #expect(try sequence(rides[1].id) == before)
        try store.setVersion(rides[1].id, 2)
        #expect(try sequence(rides[1].id) > numbers.max() ?? 0)
        // A row under way is read whatever the mark.
        try store.saveRemoteUpload(
            RemoteUpload(syncIdentifier: rides[2].syncIdentifier, service: "intervals", version: 1, state: .sending))
        #expect(try unsettled().rides.map(\.id) == [rides[1].id, rides[2].id])
        // Read through the change numbers' index and the rows under way, never every ride or row.
        let plan = try plan(
            WorkoutStore.unsettledQuery(UploadPlan.settled(.intervals), changedAfterMark: true),
            [0, 0, "intervals", "intervals", "intervals"])
        #expect(plan.contains { $0.hasPrefix("SEARCH workout USING INDEX workoutByChange (changeSequence>?)") })
        #expect(plan.contains { $0.hasPrefix("SEARCH remoteUpload USING INDEX remoteUploadUnderWay") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN workout") || $0.hasPrefix("SCAN remoteUpload") }, "\(plan)")
        // A run that stops on the way (the service out of reach) keeps the mark where it was.
        let keptMark = try mark()
        let down = ScriptedTransport([])
        uploader.reach.transport = down
        #expect(try await uploader.run([.intervals], choice: .automatic).failures.count == 1)
        #expect(try mark() == keptMark)
        // One that settles them moves it on: the new version replaced, the lost answer looked up.
        let lookedUp = UploadPlan.externalIdentifier(rides[2].syncIdentifier, version: 1)
        let answers = ScriptedTransport([
            .response(ServiceResponse(status: 200, body: [])),
            .response(ServiceResponse(status: 201, body: Array(#"{"id":"i4"}"#.utf8))),
            .response(ServiceResponse(status: 200, body: Array(#"[{"id":"i3","external_id":"\#(lookedUp)"}]"#.utf8))),
        ])
        uploader.reach.transport = answers
        let settled = try await uploader.run([.intervals], choice: .automatic)
        #expect(settled.failures.isEmpty, "\(settled.failures)")
        #expect(try mark() == (try number("SELECT max(changeSequence) FROM workout")))
        #expect(try unsettled().rides.isEmpty)
        // A row deleted takes its service's mark with it.
        try execute("DELETE FROM remoteUpload WHERE syncIdentifier = ?", [rides[0].syncIdentifier])
        #expect(try mark() == nil)
    }

    /// Three rides uploaded by one run, the second refused by the service; then the third renamed into a new version
    /// and a fourth recorded. The summary counts the rows by state and names the rides that wait and the one refused,
    /// as the full status says of them, while the mark of that run holds.
    @Test("the status in short counts the rows and names what waits and what was refused, as the full status does")
    func statusSummary() async throws {
        let (collector, folder) = try oneRideWithAnAccount()
        for journal in Fixtures.journals[1...2] { try collector.replay(journal) }
        let store = collector.store
        let refusal = ServiceResponse(status: 400, body: Array(#"{"error":"file has no records"}"#.utf8))
        let created = { (id: Int) in ServiceResponse(status: 201, body: Array(#"{"id":"i\#(id)"}"#.utf8)) }
        var uploader = Uploader(store: store, folder: folder)
        uploader.reach.transport = ScriptedTransport([.response(created(1)), .response(refusal), .response(created(3))])
        uploader.reach.pause = { _ in }
        let report = try await uploader.run([.intervals], choice: .automatic)
        #expect(report.outcomes.map(\.result) == [.uploaded, .refused, .uploaded], "\(report.outcomes)")
        // The refusal settles its ride: the run keeps its mark, through which the summary reads what changed since.
        func marks() throws -> Int? {
            try store.queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM uploadSettled") }
        }
        #expect(try marks() == 1)
        let rides = try store.uploadableRides()
        try store.setVersion(rides[2].id, 2)
        try collector.replay(Fixtures.journals[3])
        let newest = try #require(try store.newestUploadableRide())
        let summaries = try UploadStatus.summaries(store, folder)
        #expect(summaries.map(\.service) == [.intervals])
        let summary = try #require(summaries.first)
        #expect(summary.rows == [.uploaded: 2, .failed: 1])
        #expect(summary.rides.map(\.rideId) == [rides[2].id, newest.id, rides[1].id])
        #expect(summary.rides.map(\.waiting) == [true, true, false])
        #expect(summary.rides.map(\.refused) == [false, false, true])
        let full = try UploadStatus.of(store, folder)
        #expect(full.count == 4)
        #expect(Set(summary.rides.map(\.rideId)) == Set(full.filter { $0.waiting || $0.refused }.map(\.rideId)))
        for status in summary.rides { #expect(full.contains(status)) }
        // Without an account, nothing is read and nothing said.
        let empty = AccountFolder(path: folder.path + "-none")
        #expect(try UploadStatus.summaries(store, empty).isEmpty)
    }

    @Test("an account file others can read is refused, not used")
    func accountFileMode() throws {
        let folder = AccountFolder(
            path: FileManager.default.temporaryDirectory.appendingPathComponent("acc-\(UUID())").path)
        try folder.save(
            IntervalsAccount(athlete: "i1", apiKey: "k", address: "https://intervals.icu", addedMicroseconds: 0))
        #expect(try folder.intervals()?.athlete == "i1")
        chmod(folder.file(.intervals), 0o640)
        #expect(throws: UploadError.self) { try folder.intervals() }
    }
}

/// A collector with one ride and an intervals.icu account whose address no request reaches (a scripted transport
/// answers).
func oneRideWithAnAccount() throws -> (Collector, AccountFolder) {
    let collector = try Collector()
    try collector.replay(Fixtures.journals[0])
    let folder = AccountFolder(path: (collector.path as NSString).deletingLastPathComponent + "/accounts")
    try folder.save(
        IntervalsAccount(athlete: "i1", apiKey: "key-1234", address: "https://intervals.example", addedMicroseconds: 0))
    return (collector, folder)
}

/// Answers given in order, the requests' methods kept.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    enum Answer {
        case response(ServiceResponse)
        case failure(TransportFailure)
    }
    private let lock = NSLock()
    private var answers: [Answer]
    private var methods: [String] = []

    init(_ answers: [Answer]) { self.answers = answers }

    func sent() -> [String] { lock.withLock { methods } }

    func send(_ request: ServiceRequest, to address: ServiceAddress, deadlineSeconds: Double)
        async throws(TransportFailure)
        -> ServiceResponse
    {
        let answer: Answer? = lock.withLock {
            methods.append(request.method.rawValue)
            return answers.isEmpty ? nil : answers.removeFirst()
        }
        switch answer {
        case .response(let response)?: return response
        case .failure(let failure)?: throw failure
        case nil: throw TransportFailure(description: "no more answers scripted", mayHaveArrived: false)
        }
    }
}

actor Waits {
    var all: [Double] = []
    func add(_ seconds: Double) { all.append(seconds) }
}
