import Formats
import RideJournal
import WorkoutStore
import Workouts

/// One stored ride as the history shows and hands it out: its summary, its 1 Hz series as columns, and the files
/// `cyclelog export` and `show --journal` write.
public enum RideFiles {
    /// Why workout `id`, not complete, cannot be shown yet, as `show` and the mirror say it: a ride a cyclelog is
    /// writing now is shown once saved; one cut short is recovered or discarded.
    public static func notShownYet(_ id: Int64, beingWritten: Bool) -> String {
        beingWritten
            ? "workout \(id) is being recorded (or stored) right now: it is shown once it is saved"
            : "workout \(id) is unfinished (cut short while it was written): `cyclelog rebuild \(id)` recovers it, "
                + "`cyclelog delete \(id)` discards it"
    }

    /// The 1 Hz series as columns, each name with its unit; `null` where a second has no value. Values are those
    /// stored (power, cadence and heart rate to 0.1, speed to 1 mm/s, distance to 1 mm).
    public static func samplesJSON(_ ride: WorkoutStore.StoredRide) -> JSONValue {
        let samples = ride.samples
        return .object(
            [
                ("workoutId", .integer(ride.summary.id)),
                ("start", .string(UTCTime.formatSeconds(microseconds: ride.summary.startMicroseconds))),
                ("seconds", .array(samples.map { .integer(Int64($0.second)) })),
            ]
                + sampleColumns.map { column in
                    (column.name, .array(samples.map { .rounded(column.value($0), column.decimals) }))
                } + [("leftOut", .array(ride.damaged.map { .string($0.description) }))])
    }

    /// `samplesJSON(ride).rendered()` and a newline, byte for byte, written straight into bytes: a 12-hour ride has 300 000
    /// numbers, each written here from its fixed-point integer rather than built as a `JSONValue` and printed by
    /// `String(Double)` (about 15 times the time and memory).
    /// The columns of the types in `leavingOut` are not written (their values are taken out by
    /// `StoredRide.withholding`; the columns go too, so that nothing says they were).
    public static func samplesJSONBytes(_ ride: WorkoutStore.StoredRide, leavingOut: Set<DataType> = []) -> [UInt8] {
        let samples = ride.samples
        var output: [UInt8] = []
        output.reserveCapacity(samples.count * 40 + 200)
        func text(_ string: String) { output += string.utf8 }
        text("{\"workoutId\": \(ride.summary.id), \"start\": ")
        text(JSONValue.string(UTCTime.formatSeconds(microseconds: ride.summary.startMicroseconds)).rendered())
        text(", \"seconds\": [")
        for index in samples.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            writeDecimal(Int64(samples[index].second), decimals: 0, into: &output)
        }
        output.append(UInt8(ascii: "]"))
        for column in sampleColumns where column.type.map(leavingOut.contains) != true {
            text(", \"\(column.name)\": [")
            var scale = 1.0
            for _ in 0..<column.decimals { scale *= 10 }
            for index in samples.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                // The same rounding as `JSONValue.rounded`: to the nearest step, as a fixed-point integer.
                if let value = column.value(samples[index]), value.isFinite, abs(value * scale) < 9e15 {
                    writeDecimal(Int64((value * scale).rounded()), decimals: column.decimals, into: &output)
                } else {
                    text("null")
                }
            }
            output.append(UInt8(ascii: "]"))
        }
        text(", \"leftOut\": ")
        text(JSONValue.array(ride.damaged.map { .string($0.description) }).rendered())
        output += "}\n".utf8
        return output
    }

    /// The channels of `samplesJSON`, in order, with the decimals each is stored to.
    static let sampleColumns:
        [(name: String, decimals: Int, type: DataType?, value: @Sendable (SecondSample) -> Double?)] = [
            ("powerWatts", 1, .power, { $0.powerWatts }), ("cadenceRPM", 1, .cadence, { $0.cadenceRPM }),
            ("speedMetersPerSecond", 3, .speed, { $0.speedMetersPerSecond }),
            ("heartRateBPM", 1, .hr, { $0.heartRateBPM }),
            ("distanceMetersThisSecond", 3, .speed, { $0.distanceMeters }),
            ("runningFraction", 3, nil, { $0.runningFraction }),
        ]

    /// `fixed` / 10^`decimals` in JSON's shortest form: no trailing zeros, no point for a whole number.
    static func writeDecimal(_ fixed: Int64, decimals: Int, into output: inout [UInt8]) {
        var magnitude = fixed.magnitude
        var fraction = decimals
        // Trailing zeros of the fraction are dropped, and with them the point when nothing is left.
        while fraction > 0 && magnitude % 10 == 0 {
            magnitude /= 10
            fraction -= 1
        }
        // Right to left into a small buffer on the stack: 20 digits, a point, a leading zero and a sign at most.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            var start = buffer.count
            func put(_ byte: UInt8) {
                start -= 1
                buffer[start] = byte
            }
            var written = 0
            repeat {
                put(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
                written += 1
                if written == fraction { put(UInt8(ascii: ".")) }
            } while magnitude > 0 || written < fraction
            if buffer[start] == UInt8(ascii: ".") { put(UInt8(ascii: "0")) }
            if fixed < 0 { put(UInt8(ascii: "-")) }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// The statistics of seconds `from`..<`to` of the ride (from its start, clamped to it), computed as a lap's
    /// are (`show --json`'s lap keys), from the stored 1 Hz series: what a range picked on the ride's chart says.
    /// Without the types `leavingOut`: a ride taken out of them (`StoredRide.withholding`) still has the power
    /// its work is worked out from, so the statistics are taken out of them too.
    public static func rangeJSON(
        _ ride: WorkoutStore.StoredRide, from: Int, to: Int, leavingOut: Set<DataType> = []
    ) -> JSONValue {
        let lower = min(max(0, from), ride.samples.count)
        let upper = min(max(lower, to), ride.samples.count)
        var statistics = WorkoutStatistics(ride.samples[lower..<upper], elapsedSeconds: Double(upper - lower))
            .withholding(leavingOut)
        statistics.keepMovingWithinElapsed()
        return .object(
            [("fromSecond", .integer(Int64(lower))), ("toSecond", .integer(Int64(upper)))]
                + WorkoutSummary.statisticsMembers(statistics))
    }

    /// A ride's W′ balance after each second by both of Skiba's forms, and the model it was worked out against.
    public typealias WPrimeBalance = (
        model: CriticalPowerModel, integralJoules: [Double], differentialJoules: [Double]
    )

    /// W′ balance after each second of the ride (every elapsed second, a pause or gap at 0 W, as `show`'s lowest
    /// values are computed), against the critical-power model of its date; nil without one, or without power.
    public static func wPrimeBalance(_ ride: WorkoutStore.StoredRide) -> WPrimeBalance? {
        guard let model = ride.summary.analysis?.criticalPower, ride.samples.contains(where: { $0.powerWatts != nil }),
            let balance = PowerMetrics.wPrimeBalance(ride.samples.map { $0.powerWatts ?? 0 }, model: model)
        else { return nil }
        return (model, balance.integralJoules, balance.differentialJoules)
    }

    /// A balance `wPrimeBalance` worked out, as JSON.
    public static func wPrimeBalanceJSON(_ ride: WorkoutStore.StoredRide, _ balance: WPrimeBalance) -> JSONValue {
        .object([
            ("workoutId", .integer(ride.summary.id)),
            ("criticalPowerWatts", .rounded(balance.model.criticalPowerWatts, 1)),
            ("wPrimeJoules", .rounded(balance.model.wPrimeJoules, 0)),
            ("integralJoules", .array(balance.integralJoules.map { .rounded($0, 0) })),
            ("differentialJoules", .array(balance.differentialJoules.map { .rounded($0, 0) })),
        ])
    }

    /// The file kinds a ride is handed out as.
    public enum Kind: String, CaseIterable, Sendable {
        case fit, tcx, csv, journal

        /// The export format that writes it; nil for the journal.
        var exportFormat: RideExport.Format? { RideExport.Format(rawValue: rawValue) }

        /// The media type it is served with.
        public var mediaType: String {
            switch self {
            case .fit: "application/vnd.ant.fit"
            case .tcx: "application/vnd.garmin.tcx+xml"
            case .csv: "text/csv; charset=utf-8"
            case .journal: "text/plain; charset=utf-8"
            }
        }
    }

    /// What stands in the way of a file.
    public enum FileError: Error, CustomStringConvertible {
        /// An imported ride keeps the device's FIT file, not a journal.
        case noJournal(fileName: String)
        case store(StoreError)

        public var description: String {
            switch self {
            case .noJournal(let fileName):
                "it was imported from \(fileName): it has no journal, its FIT file is kept instead"
            case .store(let error): error.description
            }
        }
    }

    /// The bytes `cyclelog export` (FIT, TCX, CSV) or `cyclelog show --journal` writes for this ride; an export
    /// without the types `leavingOut` (`RideExport.file`). The journal is whole or not at all: the caller decides.
    public static func file(
        _ ride: WorkoutStore.StoredRide, _ kind: Kind, from store: WorkoutStore, leavingOut: Set<DataType> = []
    ) throws(FileError) -> [UInt8] {
        let events: [RideEvent]
        let importedFrom: String?
        do throws(StoreError) {
            if let format = kind.exportFormat {
                return try RideExport.file(ride, format: format, from: store, leavingOut: leavingOut)
            }
            events = try store.journal(ride.summary.id)
            importedFrom = events.isEmpty ? try store.importedFile(ride.summary.id)?.fileName : nil
        } catch {
            throw .store(error)
        }
        if let importedFrom { throw .noJournal(fileName: importedFrom) }
        return Array(Journal.text(events).utf8)
    }

    /// The name a download is saved under: `cyclelog export`'s, and `.journal` for the journal.
    public static func fileName(_ summary: WorkoutSummary, _ kind: Kind) -> String {
        RideExport.fileName(summary, ending: kind.rawValue)
    }
}
