import Capture
import CyclingSensors
import Foundation
import RideIdentity
import RideJournal
import WorkoutStore
import Workouts

/// Runs a file's or a stored journal's events through the `RidePipeline` into the store, its journal in small
/// transactions and the workout in the last one: a replayed capture and a rebuilt workout.
public struct Replayer: Sendable {
    public struct Options: Sendable {
        /// Wheel circumference for sensors the capture does not set one for; nil leaves the builder's default.
        /// Written into the stored journal as its `wheel *` line, so that the journal alone reproduces the ride.
        public var wheelCircumferenceMillimetres: Int?
        /// Written into the stored journal as its `auto-pause` line.
        public var autoPause: AutoPause?
        /// Events per transaction.
        public var eventsPerChunk = 4096
        /// A pause after each transaction, for tests that interrupt a replay part-way.
        public var pauseAfterEachChunkMicroseconds: UInt32 = 0

        public init() {}

        /// The options as the journal's settings, dated `time` (the file's first event).
        func settings(at time: Int64) -> [RideEvent] {
            var settings: [RideEvent] = []
            if let millimetres = wheelCircumferenceMillimetres {
                settings.append(
                    RideEvent(timeMicroseconds: time, .setting(.defaultWheelCircumference(millimetres: millimetres))))
            }
            if let autoPause { settings.append(RideEvent(timeMicroseconds: time, .setting(.autoPause(autoPause)))) }
            return settings
        }
    }

    /// What a replay or rebuild did.
    public struct Outcome: Sendable {
        public var summary: WorkoutSummary
        /// True when this capture was already stored, unchanged: nothing was written.
        public var alreadyStored: Bool
        /// Messages about data that could not be used, each naming where it was.
        public var problems: [String]
    }

    public let store: WorkoutStore
    public var options: Options

    public init(store: WorkoutStore, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    /// Replays one capture file into the store. The same capture twice gives one workout.
    public func replay(_ capture: CaptureFile) throws(ReplayError) -> Outcome {
        var problems = capture.problems.map {
            "\(capture.path): \($0.record > 0 ? "\(capture.recordWord) \($0.record): " : "")\($0.message)"
        }
        for handle in capture.unmappedHandles {
            let hex = String(handle.handle, radix: 16, uppercase: true)
            let name = "0x" + String(repeating: "0", count: 4 - hex.count) + hex
            problems.append(
                "\(capture.path): handle \(name) of \(handle.sensor) carried \(handle.notifications) notifications but "
                    + "the capture has no discovery for it; name it with --handle \(name)=UUID (e.g. 2a63)")
        }
        do {
            guard let first = capture.events.first else {
                throw ReplayError(
                    .notARide, path: capture.path,
                    "holds no usable events" + (problems.isEmpty ? "" : "\n  " + problems.joined(separator: "\n  ")))
            }
            // The ride's identity comes from the file's events; the options are settings at the head of the stored
            // journal, so a changed option gives a new content, and the ride's next version (README, "A ride's
            // identity").
            let settings = options.settings(at: first.timeMicroseconds)
            // Without settings the capture's own events, not a copy of 100 000 of them.
            let events = settings.isEmpty ? capture.events : settings + capture.events
            let computed = Self.digests(events)
            let digests = WorkoutStore.Digests(source: computed.sourceHex, content: computed.contentHex)
            let syncIdentifier = try syncIdentifier(capture.events, sourceDigest: digests.source!)
            // Another cyclelog replaying the same file right now: wait for it (it stores the ride, or is killed and
            // its hold lapses), then the ride is already stored or ours to write.
            let deadline = ContinuousClock.now + .microseconds(WorkoutStore.claimLapseMicroseconds * 2)
            while true {
                switch try store.claimWorkout(
                    syncIdentifier: syncIdentifier, source: capture.path, startMicroseconds: first.timeMicroseconds,
                    digest: digests.content)
                {
                case .alreadyStored(let id):
                    guard let summary = try store.summary(id) else {
                        throw ReplayError(.nothingToRebuild, "workout \(id) vanished")
                    }
                    return Outcome(summary: summary, alreadyStored: true, problems: problems)
                case .busy(let id):
                    guard ContinuousClock.now < deadline else {
                        throw ReplayError(
                            .busy, path: capture.path,
                            "workout \(id) is being stored from it by another cyclelog right now; nothing was written")
                    }
                    usleep(200_000)
                case .claimed(let claim):
                    let result = try build(
                        claim, events,
                        origins: Array(repeating: 0, count: events.count - capture.events.count)
                            + capture.origins,
                        originWord: capture.recordWord, writeJournal: true, digests: digests, label: capture.path)
                    problems += result.problems.map { "\(capture.path): \($0)" }
                    return Outcome(summary: result.summary, alreadyStored: false, problems: problems)
                }
            }
        } catch let error as StoreError {
            throw ReplayError(error)
        } catch let error as ReplayError {
            throw error
        } catch {
            throw ReplayError(.notARide, path: capture.path, "\(error)")
        }
    }

    /// Rebuilds a stored workout from its own journal (after a fix, or to recover a ride cut short).
    public func rebuild(_ id: Int64) throws(ReplayError) -> Outcome {
        do {
            let events = try store.journal(id)
            guard !events.isEmpty else {
                if let outcome = try FITImporter(store: store).rebuild(id) { return outcome }
                throw ReplayError(.nothingToRebuild, "workout \(id) has no stored journal or file to rebuild from")
            }
            let computed = Self.digests(events)
            let digests = WorkoutStore.Digests(source: computed.sourceHex, content: computed.contentHex)
            let claim = try store.beginRebuild(id)
            let result = try build(
                claim, events, origins: Array(1...events.count), originWord: "event", writeJournal: false,
                digests: digests, label: "workout \(id)")
            return Outcome(
                summary: result.summary, alreadyStored: false,
                problems: result.problems.map { "workout \(id) journal: \($0)" })
        } catch let error as StoreError {
            throw ReplayError(error)
        } catch let error as ReplayError {
            throw error
        } catch {
            throw ReplayError(.notARide, "workout \(id): \(error)")
        }
    }

    /// The digests of a whole journal: its lines formatted a piece per core at a time (most of the work), then
    /// hashed in order. A piece is 8192 events, about 600 kB of text.
    static func digests(_ events: [RideEvent]) -> RideDigests {
        var digests = RideDigests()
        let piece = 8192
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        var start = 0
        while start < events.count {
            let ranges = (0..<cores).map { core in
                min(events.count, start + core * piece)..<min(events.count, start + (core + 1) * piece)
            }.filter { !$0.isEmpty }
            let texts = parallelMap(ranges.count) { RideDigests.lines(events[ranges[$0]]) }
            for (range, text) in zip(ranges, texts) {
                if let text {
                    digests.add(lines: text)
                } else {
                    for event in events[range] { digests.add(event) }
                }
            }
            start = ranges[ranges.count - 1].upperBound
        }
        return digests
    }

    /// The capture's own identity (a live ride's journal carries it in its `start` line), else the ride this
    /// file's events were stored as before, else one made from their digest.
    private func syncIdentifier(_ events: [RideEvent], sourceDigest: String) throws(StoreError) -> String {
        let own = events.lazy.compactMap { event -> String? in
            if case .control(.start(let plan)) = event.kind { return plan.syncIdentifier }
            return nil
        }.first
        if let own { return own }
        if let stored = try store.workout(sourceDigest: sourceDigest) { return stored.syncIdentifier }
        return RideIdentity.syncIdentifier(digest: sourceDigest)
    }

    private func build(
        _ claim: WorkoutStore.Claim, _ events: [RideEvent], origins: [Int], originWord: String, writeJournal: Bool,
        digests: WorkoutStore.Digests, label: String
    ) throws -> (summary: WorkoutSummary, problems: [String]) {
        // Origin 0: a setting from the command line, not from the file.
        @Sendable func at(_ index: Int) -> String {
            index < origins.count && origins[index] > 0 ? "\(originWord) \(origins[index])" : "the command line"
        }
        // The time-jump rule first: the builder gets the events in a consistent order, the journal keeps them all
        // as they came.
        let timeline = RideTimeline.repair(events)
        var problems = ProblemList()
        for fault in timeline.faults { problems.add("\(at(fault.eventIndex)): \(fault.message)") }
        if timeline.droppedCount * 2 > events.count {
            _ = try store.delete(claim.workoutId)
            let first = timeline.faults.first.map { " (first at \(at($0.eventIndex)))" } ?? ""
            throw ReplayError(
                .inconsistentTimes,
                label
                    + ": its times are not in order: \(timeline.droppedCount) of \(events.count) events go back in time or "
                    + "leap\(first), so it cannot be a ride as recorded; nothing was stored")
        }
        do {
            return try build(
                claim, timeline, events, at: at, problems: problems, writeJournal: writeJournal, digests: digests,
                label: label)
        } catch let error as StoreError where error.isDiskFull {
            throw ReplayError(error, prefix: "\(label): ").adding(
                "; the ride was not stored whole (workout \(claim.workoutId) is left unfinished): "
                    + "free some space, then replay it again or run `cyclelog recover`")
        }
    }

    /// The pipeline fed: the builder with the repaired events, the journal with every event as it came, in
    /// pieces of `eventsPerChunk` events. The workout is built on one core while the journal's pieces are packed
    /// on the other(s); then each piece goes in its own transaction, and the workout in the last one.
    private func build(
        _ claim: WorkoutStore.Claim, _ timeline: RideTimeline.Repaired, _ events: [RideEvent],
        at: @escaping @Sendable (Int) -> String, problems: ProblemList, writeJournal: Bool,
        digests: WorkoutStore.Digests, label: String
    ) throws -> (summary: WorkoutSummary, problems: [String]) {
        let eventsPerChunk = options.eventsPerChunk
        let chunkCount = (timeline.events.count + eventsPerChunk - 1) / eventsPerChunk
        // Where each piece of the raw journal ends: after the event of its chunk's last built one; the last piece
        // takes every one left, misdated ones included.
        let journalEnds = (0..<chunkCount).map { chunk in
            chunk == chunkCount - 1 ? events.count : timeline.indices[(chunk + 1) * eventsPerChunk - 1] + 1
        }
        let (built, pieces) = parallelMap(
            first: { buildWorkout(timeline, at: at, problems: problems, digests: digests) },
            writeJournal ? chunkCount : 0
        ) { chunk in
            CompactJournal.encode(events[(chunk == 0 ? 0 : journalEnds[chunk - 1])..<journalEnds[chunk]])
        }
        // The journal's pieces, a transaction each; the 1 Hz series is written whole by `finish` (a replay cut
        // short is rebuilt from its journal, as `cyclelog recover` does).
        var writer = WorkoutWriter(store: store, claim: claim)
        for piece in pieces {
            try writer.write(packedJournal: piece)
            if options.pauseAfterEachChunkMicroseconds > 0 { usleep(options.pauseAfterEachChunkMicroseconds) }
        }
        guard var finished = built.finished else {
            try writer.discard()
            throw ReplayError(
                .notARide, label + ": no measurement to build a workout from (no power, speed, cadence or heart rate)")
        }
        // The clock faults the time-jump rule found are the ride's problems too.
        finished.workout.problemCount += timeline.faults.count
        let summary = try writer.finish(finished)
        return (summary, built.problems.messages)
    }

    /// What one core did while the others packed the journal: the finished workout (nil without a measurement)
    /// and the problems.
    private struct BuiltWorkout: Sendable {
        var finished: WorkoutWriter.Finished?
        var problems: ProblemList
    }

    private func buildWorkout(
        _ timeline: RideTimeline.Repaired, at: @Sendable (Int) -> String, problems: ProblemList,
        digests: WorkoutStore.Digests
    ) -> BuiltWorkout {
        var built = BuiltWorkout(problems: problems)
        var pipeline = RidePipeline(digests: digests)
        for (position, event) in timeline.events.enumerated() {
            for problem in pipeline.build(event) {
                built.problems.add("\(at(timeline.indices[position])): \(problem.message)")
            }
        }
        built.finished = pipeline.finishWorkout()
        return built
    }
}

/// Repeated problems are shown a few times, then counted: a sensor that sends 10 000 bad values should not
/// bury the summary.
struct ProblemList: Sendable {
    private var counts: [String: Int] = [:]
    private(set) var messages: [String] = []

    mutating func add(_ message: String) {
        // The part after the location says what is wrong; group by it.
        let key = message.split(separator: ":", maxSplits: 1).last.map(String.init) ?? message
        counts[key, default: 0] += 1
        if counts[key]! <= 3 {
            messages.append(message)
        } else if counts[key]! == 4 {
            messages.append(
                "… more like \"\(key.trimmingCharacters(in: .whitespaces))\" follow; they are counted, not shown")
        }
    }
}
