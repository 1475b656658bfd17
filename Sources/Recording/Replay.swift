import Capture
import Concurrency
import CyclingSensors
import Foundation
import RideIdentity
import RideJournal
import RideWriting
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
        /// Events per transaction: each piece (about 50 kB packed) overflows its page, and the last overflow page of
        /// each is part-empty, so fewer, larger pieces waste less of the file (4 096 left 15 % of the journal's pages
        /// unused).
        public var eventsPerChunk = 16384
        /// A pause after each transaction, for tests that interrupt a replay part-way.
        public var pauseAfterEachChunkMicroseconds: UInt32 = 0
        /// Whether a deleted ride may be stored again (`--undelete`), and a pulled one replaced (a pull).
        public var rules = WorkoutStore.ClaimRules()
        /// Asked before anything is written, with the ride's identity (in lower case) and digests as the file
        /// makes them: why the ride must not be stored, or nil. A pull checks here that a row's journal is the ride
        /// it names with the content it claims, so that the ride is built once, here, and a refused one leaves
        /// nothing behind (the replay throws `.unexpectedRide` with the reason).
        public var check: (@Sendable (_ syncIdentifier: String, _ digests: WorkoutStore.Digests) -> String?)?
        /// A pulled ride's marks (its version on the shared store, its collector, name and fitness test's mark),
        /// taken in the transaction that stores it. A ride found stored already is not marked here.
        public var pulled: WorkoutStore.PulledMarks?

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
            // journal, so a changed option gives a new content, and the ride's next version (Docs/reference/identity.md, "A ride's
            // identity").
            let settings = options.settings(at: first.timeMicroseconds)
            // Without settings the capture's own events, not a copy of 100 000 of them.
            let events = settings.isEmpty ? capture.events : settings + capture.events
            let result = try build(
                events, origins: Array(repeating: 0, count: settings.count) + capture.origins,
                originWord: capture.recordWord, writeJournal: true, label: capture.path, pulled: options.pulled
            ) { digests in
                try claim(capture, digests: digests)
            }
            problems += result.problems.map { "\(capture.path): \($0)" }
            return Outcome(summary: result.summary, alreadyStored: result.alreadyStored, problems: problems)
        } catch let error as StoreError {
            throw ReplayError(error)
        } catch let error as ReplayError {
            throw error
        } catch {
            throw ReplayError(.notARide, path: capture.path, "\(error)")
        }
    }

    /// The capture's ride in the store: already stored, or claimed to be written. Another cyclelog replaying the
    /// same file right now is waited for (it stores the ride, or is killed and its hold lapses).
    private func claim(_ capture: CaptureFile, digests: WorkoutStore.Digests) throws -> Claiming {
        let syncIdentifier = try syncIdentifier(capture.events, sourceDigest: digests.source!)
        if let check = options.check, let reason = check(WorkoutStore.canonical(syncIdentifier), digests) {
            throw ReplayError(.unexpectedRide, reason)
        }
        let deadline = ContinuousClock.now + .microseconds(WorkoutStore.claimLapseMicroseconds * 2)
        while true {
            switch try store.claimWorkout(
                syncIdentifier: syncIdentifier, source: capture.path,
                startMicroseconds: capture.events[0].timeMicroseconds, digest: digests.content, rules: options.rules)
            {
            case .alreadyStored(let id):
                guard let summary = try store.summary(id) else {
                    throw ReplayError(.nothingToRebuild, "workout \(id) vanished")
                }
                return .alreadyStored(summary)
            case .busy(let id):
                guard ContinuousClock.now < deadline else {
                    throw ReplayError(
                        .busy, path: capture.path,
                        "workout \(id) is being stored from it by another cyclelog right now; nothing was written")
                }
                usleep(200_000)
            case .claimed(let claim):
                return .claimed(claim)
            }
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
            let store = store
            let result = try build(
                events, origins: Array(1...events.count), originWord: "event", writeJournal: false,
                label: "workout \(id)"
            ) { _ in
                .claimed(try store.beginRebuild(id))
            }
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

    /// What a ride's digests decide: it is stored already (as this summary), or it is ours to write.
    private enum Claiming: Sendable {
        case alreadyStored(WorkoutSummary)
        case claimed(WorkoutStore.Claim)
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

    /// The pipeline fed: the builder with the repaired events, the journal with every event as it came, in
    /// pieces of `eventsPerChunk` events. The time-jump rule first; then the workout is built on one core while
    /// the other hashes the journal's text into its digests, asks `claiming` what they decide (the ride already
    /// stored, or a claim to write it) and writes the journal's pieces in order, each in its own transaction;
    /// the pieces are packed by whichever core is free. The workout goes in the last transaction, with a pulled
    /// ride's marks. A ride found stored already costs a build thrown away.
    private func build(
        _ events: [RideEvent], origins: [Int], originWord: String, writeJournal: Bool, label: String,
        pulled: WorkoutStore.PulledMarks? = nil,
        claiming: @escaping @Sendable (WorkoutStore.Digests) throws -> Claiming
    ) throws -> (summary: WorkoutSummary, alreadyStored: Bool, problems: [String]) {
        // Origin 0: a setting from the command line, not from the file.
        @Sendable func at(_ index: Int) -> String {
            index < origins.count && origins[index] > 0 ? "\(originWord) \(origins[index])" : "the command line"
        }
        // The builder gets the events in a consistent order, the journal keeps them all as they came.
        let timeline = RideTimeline.repair(events)
        Stages.mark("times-checked")
        let problems = timeline.faults.reduce(into: ProblemList()) { list, fault in
            list.add("\(at(fault.eventIndex)): \(fault.message)")
        }
        if timeline.droppedCount * 2 > events.count {
            let first = timeline.faults.first.map { " (first at \(at($0.eventIndex)))" } ?? ""
            throw ReplayError(
                .inconsistentTimes,
                label
                    + ": its times are not in order: \(timeline.droppedCount) of \(events.count) events go back in time or "
                    + "leap\(first), so it cannot be a ride as recorded; nothing was stored")
        }
        let eventsPerChunk = options.eventsPerChunk
        let pause = options.pauseAfterEachChunkMicroseconds
        let chunkCount = (timeline.events.count + eventsPerChunk - 1) / eventsPerChunk
        // Where each piece of the raw journal ends: after the event of its chunk's last built one; the last piece
        // takes every one left, misdated ones included.
        let journalEnds = (0..<chunkCount).map { chunk in
            chunk == chunkCount - 1 ? events.count : timeline.indices[(chunk + 1) * eventsPerChunk - 1] + 1
        }
        let store = store
        let pieces = OrderedWork(count: writeJournal ? chunkCount : 0) { chunk in
            CompactJournal.encode(events[(chunk == 0 ? 0 : journalEnds[chunk - 1])..<journalEnds[chunk]])
        }
        // The 1 Hz series is written whole by `finish` (a replay cut short is rebuilt from its journal, as
        // `cyclelog recover` does).
        let (built, stored) = parallelMap(
            first: {
                var built = buildWorkout(timeline, at: at, problems: problems)
                Stages.mark("workout-built")
                if var workout = built.workout {
                    // The clock faults the time-jump rule found are the ride's problems too.
                    workout.problemCount += timeline.faults.count
                    built.prepared = WorkoutStore.PreparedWorkout(workout)
                    Stages.mark("workout-prepared")
                }
                pieces.help()
                return built
            }, 1
        ) { _ in
            Result { () throws -> (Claiming, WorkoutStore.Digests, WorkoutWriter?) in
                let computed = RideDigests(events)
                Stages.mark("digests")
                let digests = WorkoutStore.Digests(source: computed.sourceHex, content: computed.contentHex)
                let claimed: Claiming
                do { claimed = try claiming(digests) } catch {
                    pieces.stop()
                    throw error
                }
                guard case .claimed(let claim) = claimed else {
                    pieces.stop()
                    return (claimed, digests, nil)
                }
                var writer = WorkoutWriter(store: store, claim: claim)
                do throws(StoreError) {
                    for chunk in 0..<pieces.count {
                        try writer.write(packedJournal: pieces.take(chunk))
                        if pause > 0 { usleep(pause) }
                    }
                } catch {
                    pieces.stop()
                    throw Self.unfinished(error, claim, label)
                }
                Stages.mark("journal-written")
                return (claimed, digests, writer)
            }
        }
        let (claimed, digests, writer) = try stored[0].get()
        if case .alreadyStored(let summary) = claimed { return (summary, true, []) }
        guard let writer else { preconditionFailure("a claimed ride has its writer") }
        guard let prepared = built.prepared else {
            try writer.discard()
            throw ReplayError(
                .notARide, label + ": no measurement to build a workout from (no power, speed, cadence or heart rate)")
        }
        do {
            defer { Stages.mark("stored") }
            return (
                try writer.finish(prepared, digests: digests, pulled: pulled), false, built.problems.messages
            )
        } catch {
            throw Self.unfinished(error, writer.claim, label)
        }
    }

    /// A write that failed part-way: a full disk says what is left and what to do.
    private static func unfinished(_ error: StoreError, _ claim: WorkoutStore.Claim, _ label: String) -> ReplayError {
        guard error.isDiskFull else { return ReplayError(error) }
        return ReplayError(error, prefix: "\(label): ").adding(
            "; the ride was not stored whole (workout \(claim.workoutId) is left unfinished): "
                + "free some space, then replay it again or run `cyclelog recover`")
    }

    /// What one core did while the other made the digests and wrote the journal: the finished workout (nil
    /// without a measurement; its digests come from the other core), its stored parts, and the problems.
    private struct BuiltWorkout: Sendable {
        var workout: Workout?
        var prepared: WorkoutStore.PreparedWorkout?
        var problems: ProblemList
    }

    private func buildWorkout(
        _ timeline: RideTimeline.Repaired, at: @Sendable (Int) -> String, problems: ProblemList
    ) -> BuiltWorkout {
        var built = BuiltWorkout(problems: problems)
        // Only `build`: the pipeline takes no journal here, and the digests come from the other core.
        var pipeline = RidePipeline()
        for (position, event) in timeline.events.enumerated() {
            for problem in pipeline.build(event) {
                built.problems.add("\(at(timeline.indices[position])): \(problem.message)")
            }
        }
        built.workout = pipeline.finishWorkout()?.workout
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
