import DBus
import RecorderInterface
import Synchronization
import Testing

@testable import RecorderService

/// `Control`'s rules without a bus or a recorder: a recorder here is its control sequence and the commands it was
/// handed. The expected answers are the rules of Docs/reference/dbus.md (`Control` is idempotent per request id,
/// `expect` guards against a ride that changed, a refused request may be tried again).
@Suite struct ControlRequestsTests {
    /// A recorder that applies every command but the ones it is told to refuse, counting them in its sequence.
    final class Recorder: Sendable {
        private let state = Mutex(
            (sequence: UInt64(4), applied: [RecorderCommand](), refusing: false, ended: false))

        var applied: [RecorderCommand] { state.withLock { $0.applied } }
        func refuse(_ refusing: Bool) { state.withLock { $0.refusing = refusing } }

        func status() -> ControlRequests.Answer {
            state.withLock { ControlRequests.Answer(state: $0.ended ? .ended : .running, controlSequence: $0.sequence) }
        }

        /// An End applied before the caller reads the status again (`serve` may get to it first).
        func end() { state.withLock { $0.ended = true } }

        func perform(_ command: RecorderCommand) throws(DBusError) {
            let refused = state.withLock { state in
                guard !state.refusing else { return true }
                // A second End saves a ride ended already: no control more.
                if command == .control(.end) || command == .endNow {
                    if state.ended { return false }
                    state.ended = true
                }
                state.sequence += 1
                state.applied.append(command)
                return false
            }
            if refused { throw DBusError(name: RecorderControl.refusedError, message: "not now") }
        }
    }

    static func body(_ id: String, _ command: String, expect: UInt64 = 0, _ args: [(String, DBusValue)] = [])
        -> [DBusValue]
    {
        [.string(id), .string(command), .uint64(expect), .properties(args)]
    }

    static func send(_ requests: ControlRequests, _ recorder: Recorder, _ body: [DBusValue]) async throws(DBusError)
        -> (ControlRequests.Answer, Bool)
    {
        try await requests.answer(body) {
            recorder.status()
        } perform: { (command) throws(DBusError) in
            try recorder.perform(command)
        }
    }

    @Test func aRequestRepeatedWithItsIdIsAppliedOnceAndAnsweredAlike() async throws {
        let (requests, recorder) = (ControlRequests(), Recorder())
        let first = try await Self.send(requests, recorder, Self.body("phone-1", "lap"))
        #expect(first.0 == ControlRequests.Answer(state: .running, controlSequence: 5))
        #expect(first.1 == false)
        for _ in 0..<2 {
            let again = try await Self.send(requests, recorder, Self.body("phone-1", "lap"))
            #expect(again.0 == first.0)
            #expect(again.1 == true)
        }
        #expect(recorder.applied == [.control(.lap)])
    }

    @Test func anExpectedSequenceThatIsNotTheRecordersIsStaleAndNothingIsApplied() async throws {
        let (requests, recorder) = (ControlRequests(), Recorder())
        _ = try await Self.send(requests, recorder, Self.body("a", "lap", expect: 4))
        let stale = await #expect(throws: DBusError.self) {
            _ = try await Self.send(requests, recorder, Self.body("b", "lap", expect: 4))
        }
        #expect(stale?.name == RecorderControl.staleError)
        #expect(stale?.message.contains("expected control sequence 4, but the recorder is at 5") == true)
        #expect(recorder.applied == [.control(.lap)])
    }

    @Test func aCommandThatCannotBeReadIsRefusedAsSuchWhateverItsExpect() async throws {
        let (requests, recorder) = (ControlRequests(), Recorder())
        _ = try await Self.send(requests, recorder, Self.body("a", "lap", expect: 4))
        // The sequence is 5 now: `expect: 4` is stale, but the command is read first.
        await #expect(throws: DBusError(name: DBusError.invalidArgumentsName, message: "grade takes percent (±40)")) {
            _ = try await Self.send(requests, recorder, Self.body("b", "grade", expect: 4))
        }
        #expect(recorder.applied == [.control(.lap)])
    }

    /// A style value of another type, read by a caller and passed on (as the mirror does), is sent as a value of
    /// that type: the recorder names it as it would have from the caller itself.
    @Test func aStyleValueOfAnotherTypeIsPassedOnAsThatType() throws {
        let read = try RecorderCommand(name: "start", arguments: ["goal": .double(45), "name": .string("Tempo")])
        #expect(read.arguments["goal"]?.signature == "d")
        #expect(read.arguments["name"] == .string("Tempo"))
        for value in [DBusValue.int32(1), .uint64(2), .int64(3), .byte(4), .objectPath("/x")] {
            let passed = try RecorderCommand(name: "start", arguments: ["goal": value])
            #expect(passed.arguments["goal"]?.signature == value.signature)
        }
    }

    @Test func aRefusedRequestIsNotRememberedAndMayBeTriedAgain() async throws {
        let (requests, recorder) = (ControlRequests(), Recorder())
        recorder.refuse(true)
        await #expect(throws: DBusError(name: RecorderControl.refusedError, message: "not now")) {
            _ = try await Self.send(requests, recorder, Self.body("w-1", "marker", [("text", .string("gel"))]))
        }
        recorder.refuse(false)
        let retried = try await Self.send(requests, recorder, Self.body("w-1", "marker", [("text", .string("gel"))]))
        #expect(retried.1 == false)
        #expect(recorder.applied == [.marker("gel")])
    }

    /// A command is read (and refused by name) only once the request id and the sequence are checked, and a wrong
    /// one is not remembered.
    @Test func aWrongCommandOrRequestIdIsRefusedByName() async throws {
        let (requests, recorder) = (ControlRequests(), Recorder())
        await #expect(
            throws: DBusError(name: DBusError.invalidArgumentsName, message: "requestId takes 1 to 200 bytes")
        ) {
            _ = try await Self.send(requests, recorder, Self.body("", "lap"))
        }
        await #expect(
            throws: DBusError(
                name: DBusError.invalidArgumentsName, message: "target takes watts (0–3000) or change (±500)")
        ) {
            _ = try await Self.send(requests, recorder, Self.body("t-1", "target"))
        }
        let later = try await Self.send(requests, recorder, Self.body("t-1", "target", [("watts", .double(200))]))
        #expect(later.1 == false)
        #expect(recorder.applied == [.steer(.target(watts: 200))])
    }

    /// End and Cancel are carried out just after the reply: the answer is their outcome.
    @Test func endIsAnsweredWithItsOutcome() async throws {
        let (requests, recorder) = (ControlRequests(), Recorder())
        let end = try await Self.send(requests, recorder, Self.body("e-1", "end"))
        #expect(end.0 == ControlRequests.Answer(state: .ended, controlSequence: 5))
        let cancel = try await Self.send(ControlRequests(), Recorder(), Self.body("c-1", "cancel"))
        #expect(cancel.0 == ControlRequests.Answer(state: .cancelled, controlSequence: 5))
        // Carried out before the status is read again (the fake applies it at once): still its outcome, one
        // control more; a second End, of a ride ended already, adds none.
        let ended = Recorder()
        ended.end()
        let second = try await Self.send(ControlRequests(), ended, Self.body("e-2", "end", [("now", .boolean(true))]))
        #expect(second.0 == ControlRequests.Answer(state: .ended, controlSequence: 4))
    }

    /// The newest `capacity` answers are kept: an older id is a new request again.
    @Test func onlyTheNewestAnswersAreKept() async throws {
        let (requests, recorder) = (ControlRequests(capacity: 2), Recorder())
        for id in ["1", "2", "3"] { _ = try await Self.send(requests, recorder, Self.body(id, "lap")) }
        #expect(try await Self.send(requests, recorder, Self.body("3", "lap")).1 == true)
        #expect(try await Self.send(requests, recorder, Self.body("1", "lap")).1 == false)
        #expect(recorder.applied.count == 4)
    }
}
