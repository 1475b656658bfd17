import Charts
import Crypto
import Formats
import HTTPTypes
import Hummingbird
import NIOCore
import RideHistory
import WorkoutStore
import Workouts

/// The ride history under `/api/v1` (Docs/guide/second-screen.md, "The ride history"): the rides, one ride's summary, its 1 Hz series
/// and its files, the FTP and the power curve — the same JSON and bytes as `cyclelog list --json`, `show --json`,
/// `ftp --json` and `export`, from the same code. The database is opened read-only for each request, so a ride the
/// recorder is writing is read through WAL without holding it up, and nothing here ever writes.
///
/// A device sees what it was granted (Docs/reference/data-types.md): without `history` none of these routes is
/// there for it, as on a mirror that serves no history; without `power` neither are the reports over power (FTP,
/// the power curve, the weekly load); and each ride reaches it with the values of every type it was not granted
/// taken out (`StoredRide.withholding`), in its summary, series, charts and files alike. The journal, which holds
/// every sensor's bytes as they came, is handed only to a device granted every type of measurement.
public struct HistoryAPI: Sendable {
    /// The ride database, resolved as the CLI resolves `--db`.
    public let databasePath: String

    public init(databasePath: String) {
        self.databasePath = databasePath
    }

    /// The routes under `/api/v1`: workouts, workouts/ID and its samples, range, wprime(.svg), chart.svg,
    /// sparkline.svg and export.KIND; ftp, weekly-load(.svg), power-curve(.svg). Each request's work stops when its
    /// client leaves: before it starts, and part-way through a reading of the database.
    var routes: RouteCollection<MirrorContext> {
        let all = RouteCollection(context: MirrorContext.self)
        let routes = all.group().add(middleware: Granted(needs: [.history]))
        routes.get("workouts") { request, context in
            let query = request.uri.queryParameters
            let filter: RideList.Filter
            switch RideList.Filter.parse(since: query.get("since"), until: query.get("until"), text: query.get("q")) {
            case .success(let parsed): filter = parsed
            case .failure(let error): return MirrorResponder.error(.badRequest, error.description)
            }
            // A page: the newest `limit` rides, or those after ride `after` in the list (older). Without a limit,
            // every ride the filter admits, as `cyclelog list --all --json`.
            var limit: Int?
            if let word = query.get("limit") {
                guard let value = Int(word), (1...Self.mostRidesInAPage).contains(value) else {
                    return MirrorResponder.error(.badRequest, "limit takes 1 to \(Self.mostRidesInAPage) rides")
                }
                limit = value
            }
            var after: Int64?
            if let word = query.get("after") {
                guard let value = Int64(word) else {
                    return MirrorResponder.error(.badRequest, "after takes a workout's id")
                }
                after = value
            }
            return await exchange(request, context).read { [limit, after] store throws(StoreError) in
                var position: WorkoutStore.ListPosition?
                if let id = after {
                    // A ride deleted since the last page was fetched: the list is to be read again from the top.
                    guard let found = try store.listPosition(of: id) else {
                        return .error(.notFound, Exchange.noSuchRide(String(id)) + ": load the list again")
                    }
                    position = found
                }
                // One more than the page holds, to know whether another page follows.
                var page = try RideList.page(in: store, filter, after: position, newest: limit.map { $0 + 1 })
                let withheld = Self.withheld(context)
                var headers: HTTPFields = [Self.totalCount: String(page.admitted)]
                if let limit, page.entries.count > limit {
                    page.entries.removeLast(page.entries.count - limit)
                    headers[Self.link] = "<\(Self.nextPage(request, after: page.entries[limit - 1].id))>; rel=\"next\""
                }
                return .json(
                    RideList.json(
                        page.entries.map { $0.withholding(withheld) },
                        ftp: try store.ftpHistory(asOf: page.entries.map(\.startMicroseconds)),
                        // Read around the rides shown, not from every ride.
                        overlaps: try store.rideOverlaps(of: page.entries.map(\.id))),
                    pretty: true, headers: headers)
            }
        }
        routes.get("workouts/:id") { request, context in
            await exchange(request, context).ride(id(context)) { ride, _ throws(StoreError) in .json(ride.summary.json)
            }
        }
        routes.get("workouts/:id/samples") { request, context in
            await exchange(request, context).ride(id(context), analysed: false) { ride, _ throws(StoreError) in
                .file(
                    RideFiles.samplesJSONBytes(ride, leavingOut: Self.withheld(context)), "application/json", name: nil)
            }
        }
        routes.get("workouts/:id/range") { request, context in
            let query = request.uri.queryParameters
            guard let from = query.get("from").flatMap(Int.init), let to = query.get("to").flatMap(Int.init) else {
                return MirrorResponder.error(.badRequest, "range takes from=SECOND&to=SECOND (from the ride's start)")
            }
            return await exchange(request, context).ride(id(context), analysed: false) { ride, _ throws(StoreError) in
                .json(RideFiles.rangeJSON(ride, from: from, to: to, leavingOut: Self.withheld(context)))
            }
        }
        for picture in [false, true] {
            routes.get(picture ? "workouts/:id/wprime.svg" : "workouts/:id/wprime") { request, context in
                let theme = Self.theme(request)
                return await exchange(request, context).ride(id(context)) { ride, _ throws(StoreError) in
                    guard let balance = RideFiles.wPrimeBalance(ride) else {
                        return .error(
                            .notFound, "workout \(ride.summary.id): no power, or no critical-power model on its date")
                    }
                    guard picture else { return .json(RideFiles.wPrimeBalanceJSON(ride, balance)) }
                    return .file(
                        Array(
                            WPrimeBalanceChart.svg(
                                ride.summary, model: balance.model, integralJoules: balance.integralJoules,
                                differentialJoules: balance.differentialJoules, theme: theme
                            ).utf8), "image/svg+xml", name: nil)
                }
            }
        }
        routes.get("workouts/:id/chart.svg") { request, context in
            let query = request.uri.queryParameters
            let theme = Self.theme(request)
            let from = query.get("from").flatMap(Int.init), to = query.get("to").flatMap(Int.init)
            // The page's own width in pixels (held to 320…2400 by the chart), so its text is read at its size.
            let width = query.get("width").flatMap(Int.init) ?? 1100
            return await exchange(request, context).ride(id(context), analysed: false) { ride, _ throws(StoreError) in
                // Held to the ride before anything is drawn: any two integers make a range of its seconds.
                let seconds = from.flatMap { from in
                    to.map {
                        RideChart.zoom(
                            from: from, to: $0, rideSeconds: RideChart.rideLength(ride.summary, ride.samples))
                    }
                }
                return .file(
                    Array(
                        RideChart.svg(
                            ride.summary, samples: ride.samples, seconds: seconds, theme: theme, widthPixels: width
                        ).utf8),
                    "image/svg+xml", name: nil)
            }
        }
        routes.get("workouts/:id/sparkline.svg") { request, context in
            await exchange(request, context).ride(id(context), analysed: false) { ride, _ throws(StoreError) in
                .file(Array(PowerSparkline.svg(ride.samples).utf8), "image/svg+xml", name: nil)
            }
        }
        for kind in RideFiles.Kind.allCases {
            routes.get("workouts/:id/export.\(kind.rawValue)") { request, context in
                let withheld = Self.withheld(context)
                // The journal holds each sensor's bytes whole: a power meter's carry its cadence and wheel too.
                if kind == .journal, !withheld.isDisjoint(with: DataType.recorded) {
                    return MirrorResponder.error(.notFound, "no GET \(request.uri.path) here")
                }
                return await exchange(request, context).ride(id(context), analysed: false) {
                    ride, store throws(StoreError) in
                    do throws(RideFiles.FileError) {
                        return .file(
                            try RideFiles.file(ride, kind, from: store, leavingOut: withheld), kind.mediaType,
                            name: RideFiles.fileName(ride.summary, kind))
                    } catch {
                        switch error {
                        case .store(let storeError): throw storeError
                        case .noJournal(let fileName):
                            // The file's name only: where it lay on this machine is nothing a screen needs to know.
                            let name = fileName.split(separator: "/").last.map(String.init) ?? fileName
                            return .error(
                                .notFound,
                                "workout \(ride.summary.id): \(RideFiles.FileError.noJournal(fileName: name))")
                        }
                    }
                }
            }
        }
        // The reports over every ride's power.
        let powerReports = all.group().add(middleware: Granted(needs: [.history, .power]))
        powerReports.get("ftp") { request, context in
            guard let days = PowerCurveReport.days(request.uri.queryParameters.get("window") ?? "42d") else {
                return Self.badWindow
            }
            return await exchange(request, context).read { store throws(StoreError) in
                .json(try FTPReport(store, days: days).json)
            }
        }
        for picture in [false, true] {
            powerReports.get(picture ? "weekly-load.svg" : "weekly-load") { request, context in
                guard let weeks = Int(request.uri.queryParameters.get("weeks") ?? "12"), (1...520).contains(weeks)
                else {
                    return MirrorResponder.error(.badRequest, "weeks takes 1 to 520")
                }
                let theme = Self.theme(request)
                return await exchange(request, context).read { store throws(StoreError) in
                    let load = try RideList.weeklyLoad(in: store, weeks: weeks)
                    return picture
                        ? .file(Array(WeeklyLoadChart.svg(load, theme: theme).utf8), "image/svg+xml", name: nil)
                        : .json(load.json)
                }
            }
        }
        for picture in [false, true] {
            powerReports.get(picture ? "power-curve.svg" : "power-curve") { request, context in
                guard let days = PowerCurveReport.days(request.uri.queryParameters.get("window") ?? "90d") else {
                    return Self.badWindow
                }
                let theme = Self.theme(request)
                return await exchange(request, context).read { store throws(StoreError) in
                    let window = try PowerCurveReport.window(store, days: days)
                    guard picture else { return .json(PowerCurveReport.json(window)) }
                    return .file(
                        Array(
                            PowerCurveChart.svg(
                                window, estimate: window.estimate, fullCurve: window.curve, theme: theme
                            )
                            .utf8),
                        "image/svg+xml", name: nil)
                }
            }
        }
        return all
    }

    /// What the request's device was not granted of the ride's data.
    static func withheld(_ context: MirrorContext) -> Set<DataType> {
        DataType.recorded.subtracting(context.device?.types ?? [])
    }

    /// One request's reading of the database.
    private func exchange(_ request: Request, _ context: MirrorContext) -> Exchange {
        Exchange(
            databasePath: databasePath, url: request.uri.description, ifNoneMatch: request.headers[.ifNoneMatch],
            withheld: Self.withheld(context), clientGone: context.clientGone)
    }

    /// The ride's id as the path says it (`workouts/ID/…`).
    private func id(_ context: MirrorContext) -> Substring {
        Substring(context.parameters.get("id") ?? "")
    }

    /// Pictures for the dark page ask for `theme=dark`; light (a file's) otherwise.
    private static func theme(_ request: Request) -> ChartTheme {
        ChartTheme(query: request.uri.queryParameters.get("theme"))
    }

    /// The most rides a page of `workouts` holds.
    static let mostRidesInAPage = 1000

    /// How many rides the filter admits, on every page of `workouts`.
    static let totalCount = HTTPField.Name("X-Total-Count")!

    /// Where the next page of `workouts` is (RFC 8288's `rel="next"`), when another follows.
    static let link = HTTPField.Name("Link")!

    /// The request's path and query for the page after ride `id`: the same filter and limit, as the request
    /// spelled them.
    static func nextPage(_ request: Request, after id: Int64) -> String {
        let kept = (request.uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("after=") && $0 != "after" }
        return request.uri.path + "?" + (kept + ["after=\(id)"]).joined(separator: "&")
    }

    static let badWindow = MirrorResponder.error(.badRequest, "window takes days (42d), weeks (6w) or a number of days")

    /// One request's reading of the database, with what its client already holds.
    struct Exchange: Sendable {
        let databasePath: String
        /// The path and query, part of the ETag.
        let url: String
        let ifNoneMatch: String?
        /// What the device was not granted: taken out of every ride read, and part of the ETag (a grant changed
        /// is a different answer).
        var withheld: Set<DataType> = []
        /// Whether the request's client went away (its connection closed): its work is then not done, or stopped.
        var clientGone: @Sendable () -> Bool = { false }

        /// What a request for a ride id that names no ride is told (the empty id of `workouts/` too).
        static func noSuchRide(_ reference: some StringProtocol) -> String { "there is no workout '\(reference)'" }

        /// A stored ride by its id, or the answer `show` would give instead (404 unknown, 409 unfinished).
        func ride(
            _ reference: Substring, analysed: Bool = true,
            _ work: @escaping @Sendable (WorkoutStore.StoredRide, WorkoutStore) throws(StoreError) -> Answer
        ) async -> Response {
            await read { store throws(StoreError) in
                guard let id = Int64(reference), try store.resolve(String(id)) != nil else {
                    return .error(.notFound, Self.noSuchRide(reference))
                }
                guard let ride = try store.ride(id, analysed: analysed) else {
                    return .error(.conflict, RideFiles.notShownYet(id, beingWritten: try store.isBeingWritten(id)))
                }
                return try work((consume ride).withholding(withheld), store)
            }
        }

        /// `work` on the database opened read-only, through `WorkoutStore.blocking`: SQLite blocks, the server's threads
        /// must not. When the database marks its changes, the ETag is that mark with the URL, checked before
        /// anything is read: an unchanged page costs one query. (The mark is read first, so a change landing in
        /// between gives a page newer than its tag, which the next request simply fetches again.)
        func read(_ work: @escaping @Sendable (WorkoutStore) throws(StoreError) -> Answer) async -> Response {
            do throws(StoreError) {
                return try await WorkoutStore.blocking { [self] () throws(StoreError) -> Response in
                    // Queued behind other requests, a request whose client left meanwhile is answered unread.
                    if clientGone() { return Self.abandoned }
                    let store = try WorkoutStore(path: databasePath, access: .read, abandonWhen: clientGone)
                    let tag = try store.changeMark().map(tag)
                    if let tag, Answer.holds(ifNoneMatch, tag) { return Answer.notModified(tag) }
                    return try work(store).response(ifNoneMatch: ifNoneMatch, tag: tag)
                }
            } catch {
                let status: HTTPResponse.Status = error.code == .busy ? .serviceUnavailable : .internalServerError
                return MirrorResponder.error(status, "the ride database: \(error.description)")
            }
        }

        /// Every answer is a function of the database's contents, the URL and what the device was granted
        /// (windows end with the newest ride, not today), and of this program: the mark of the last change, this
        /// process's own random number and a digest of the URL and the types withheld.
        func tag(mark: Int64) -> String {
            "\"\(String(UInt64(bitPattern: mark), radix: 36))-\(Self.process)-"
                + SHA256.hash(data: Array((url + " " + DataType.text(withheld)).utf8)).prefix(8).hexadecimal + "\""
        }

        static let process = String(UInt64.random(in: 0...UInt64.max), radix: 36)

        /// What a request whose client left is answered, for nobody: the work was not done.
        static let abandoned = MirrorResponder.error(.serviceUnavailable, "the client went away")
    }

    /// What a history request answers, before its ETag is compared.
    enum Answer: Sendable {
        case json(JSONValue, pretty: Bool = false, headers: HTTPFields = [:])
        /// Bytes of a media type; with a name, a download saved under it.
        case file([UInt8], String, name: String?)
        case error(HTTPResponse.Status, String)

        /// 200 with the body and its ETag (`tag`, else the SHA-256 of the body), or 304 when the client already
        /// holds it.
        func response(ifNoneMatch: String?, tag: String? = nil) -> Response {
            var headers: HTTPFields = [.cacheControl: "no-cache"]
            let body: ResponseBody
            let digest: () -> SHA256.Digest
            switch self {
            case .error(let status, let message): return MirrorResponder.error(status, message)
            case .json(let value, let pretty, let more):
                headers.append(contentsOf: more)
                let buffer = ByteBuffer(string: value.rendered(pretty: pretty) + "\n")
                headers[.contentType] = "application/json"
                body = .init(byteBuffer: buffer)
                digest = { buffer.withUnsafeReadableBytes { SHA256.hash(data: $0) } }
            case .file(let file, let mediaType, let name):
                headers[.contentType] = mediaType
                if let name { headers[.contentDisposition] = "attachment; filename=\"\(name)\"" }
                body = Self.inPieces(file)
                digest = { SHA256.hash(data: file) }
            }
            let tag = tag ?? "\"" + digest().hexadecimal + "\""
            if Self.holds(ifNoneMatch, tag) { return Self.notModified(tag) }
            headers[.eTag] = tag
            return Response(status: .ok, headers: headers, body: body)
        }

        /// A large file (a long ride's samples, chart or FIT) goes out 64 kB at a time as the connection takes it,
        /// instead of being copied whole into the server's buffer beside the bytes themselves.
        static func inPieces(_ bytes: [UInt8]) -> ResponseBody {
            let piece = 64 * 1024
            guard bytes.count > piece else { return .init(byteBuffer: ByteBuffer(bytes: bytes)) }
            return ResponseBody(contentLength: bytes.count) { writer in
                for start in stride(from: 0, to: bytes.count, by: piece) {
                    try await writer.write(ByteBuffer(bytes: bytes[start..<min(start + piece, bytes.count)]))
                }
                try await writer.finish(nil)
            }
        }

        static func notModified(_ tag: String) -> Response {
            Response(status: .notModified, headers: [.cacheControl: "no-cache", .eTag: tag])
        }

        /// Whether an If-None-Match header names `tag`.
        static func holds(_ ifNoneMatch: String?, _ tag: String) -> Bool {
            ifNoneMatch?.split(separator: ",").contains { $0.trimmingSpaces == tag } ?? false
        }
    }
}

/// Routes there only for a device granted `needs`; for any other, the answer of a path that is not there.
struct Granted: RouterMiddleware {
    typealias Context = MirrorContext
    let needs: Set<DataType>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let device = context.device, device.types.isSuperset(of: needs) else { throw HTTPError(.notFound) }
        return try await next(request, context)
    }
}

extension Sequence<UInt8> {
    fileprivate var hexadecimal: String {
        map { String($0, radix: 16).leftPadded(2) }.joined()
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
