import Concurrency

/// One sensor's link as a state machine without I/O: what BlueZ reported and the time come in, the state
/// changes, and what the recorder should do comes out (connect, subscribe again, drop the link, write a link
/// change into the journal, tell the rider). The clock is passed in, so the reconnect and silence rules are
/// tested in milliseconds with a clock the test moves.
///
///     searching ──seen──▶ connecting ──connected──▶ streaming ──silent──▶ stale ──silent again──▶ reconnecting
///         ▲                   │ failed (backoff)        ▲   notification ◀─┘                          │
///         └── gone, bluetoothd left ◀── reconnecting ◀──┴──────────── link lost ◀────────────────────────┘
public struct SensorLink: Sendable, Equatable {
    /// Time on the caller's clock, from any origin.
    public typealias Time = Duration

    public enum Input: Sendable, Equatable {
        /// BlueZ lists the device through the chosen adapter; `connected` and `subscribed` as they are.
        case seen(connected: Bool)
        /// Connection attempt `attempt` has the GATT objects: the link is up.
        case linkEstablished(attempt: Int)
        /// Connection attempt `attempt` subscribed to the measurements: the sensor streams.
        case subscribed(attempt: Int)
        /// Connection attempt `attempt` failed (or found nothing to subscribe to).
        case failed(attempt: Int)
        case notification
        /// BlueZ says the device is not connected any more.
        case linkLost
        /// The device object is gone (removed, or bluetoothd left the bus).
        case gone
    }

    public enum Action: Sendable, Equatable {
        /// Start connection attempt `attempt`; it reports back with the same number.
        case connect(attempt: Int)
        /// Stop and start the measurement notifications again.
        case resubscribe
        /// Drop the link (it is connected again afterwards).
        case disconnect
        /// Write `connect` / `disconnect` into the journal.
        case journalLinkUp
        case journalLinkDown
        /// Something the rider should read on the status line.
        case tell(Notice)
    }

    public enum Notice: Sendable, Equatable {
        case linkLost, wentSilent, stayedSilent

        /// In a rider's words, about the sensor called `name`.
        public func text(_ name: String) -> String {
            switch self {
            case .linkLost: "\(name) disconnected: reconnecting"
            case .wentSilent: "\(name) went silent: subscribing again"
            case .stayedSilent: "\(name) stayed silent: reconnecting"
            }
        }
    }

    public private(set) var state = LiveStatus.SensorState.searching
    /// A `connect` line is in the journal and no `disconnect` after it.
    public private(set) var linkUpInJournal = false
    /// The measurements are subscribed on the current link.
    public private(set) var isSubscribed = false
    /// The attempt in flight; reports of any other attempt are stale and ignored.
    public private(set) var attemptInFlight: Int?
    private var attempts = 0
    private var failures = 0
    private var nextAttempt: Time = .zero
    private var lastNotification: Time?
    /// Smoothed interval between notifications, in seconds: how long a silence has to be to count.
    private var meanIntervalSeconds: Double?
    private var resubscribedAt: Time?
    private let policy: ReconnectPolicy

    public init(policy: ReconnectPolicy = ReconnectPolicy()) {
        self.policy = policy
    }

    public mutating func handle(_ input: Input, at now: Time) -> [Action] {
        switch input {
        case .seen(let connected):
            if !connected || !isSubscribed {
                guard attemptInFlight == nil, now >= nextAttempt else { return [] }
                attempts += 1
                attemptInFlight = attempts
                state = failures == 0 ? .connecting : .reconnecting
                return [.connect(attempt: attempts)]
            }
            return checkSilence(now)
        case .linkEstablished(let attempt):
            guard attempt == attemptInFlight else { return [] }
            return journalLinkUp()
        case .subscribed(let attempt):
            guard attempt == attemptInFlight else { return [] }
            attemptInFlight = nil
            failures = 0
            isSubscribed = true
            state = .streaming
            lastNotification = now
            resubscribedAt = nil
            return journalLinkUp()
        case .failed(let attempt):
            guard attempt == attemptInFlight else { return [] }
            attemptInFlight = nil
            failures += 1
            isSubscribed = false
            state = .reconnecting
            nextAttempt = now + .seconds(policy.backoffSeconds(afterFailures: failures))
            return []
        case .notification:
            if let last = lastNotification, state == .streaming {
                let interval = (now - last).seconds
                meanIntervalSeconds = meanIntervalSeconds.map { 0.9 * $0 + 0.1 * interval } ?? interval
            }
            lastNotification = now
            state = .streaming
            // BlueZ re-enables notifications by itself after a reconnect, so they can come before our setup.
            return journalLinkUp()
        case .linkLost:
            guard linkUpInJournal else { return [] }
            return [.tell(.linkLost)] + linkDown(now)
        case .gone:
            // Whatever attempt is in flight reaches a device that no longer exists: its report is ignored.
            attemptInFlight = nil
            let actions = linkDown(now)
            state = .searching
            return actions
        }
    }

    private mutating func checkSilence(_ now: Time) -> [Action] {
        guard let last = lastNotification else { return [] }
        let limit = Duration.seconds(policy.staleAfterSeconds(meanIntervalSeconds: meanIntervalSeconds))
        guard now - last > limit else { return [] }
        state = .stale
        if let resubscribed = resubscribedAt, resubscribed > last {
            // Subscribing again did not help: drop the link and connect again.
            guard now - resubscribed > limit else { return [] }
            resubscribedAt = nil
            return [.tell(.stayedSilent)] + linkDown(now) + [.disconnect]
        }
        resubscribedAt = now
        return [.tell(.wentSilent), .resubscribe]
    }

    private mutating func journalLinkUp() -> [Action] {
        guard !linkUpInJournal else { return [] }
        linkUpInJournal = true
        return [.journalLinkUp]
    }

    private mutating func linkDown(_ now: Time) -> [Action] {
        isSubscribed = false
        state = .reconnecting
        lastNotification = nil
        nextAttempt = now + .seconds(policy.initialBackoffSeconds)
        guard linkUpInJournal else { return [] }
        linkUpInJournal = false
        return [.journalLinkDown]
    }
}
