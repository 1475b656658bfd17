/// Which sensor is each channel's source at an instant, by the rule the ride's 1 Hz series follows
/// (`SecondSample`, whose `sources` keep the choice per second): among the sensors whose latest value on the channel still holds (at most
/// `WorkoutBuilder.Configuration.holdMicroseconds` old), the best-ranked (`SourceRank`: a power meter before a
/// trainer, a crank before a trainer's cadence estimate, a wheel sensor before a trainer's speed), and of two
/// alike the one heard first. Every screen that shows a notification's readings the moment they arrive shows only
/// those of the chosen source, so that it agrees with the dashboard and the stored ride. Pure, clocked by the
/// events' own times.
public struct LiveSources: Sendable {
    private var latest: [Channel: [String: (rank: Int, atMicroseconds: Int64)]] = [:]
    /// The order sensors were first heard in.
    private var order: [String: Int] = [:]
    private let holdMicroseconds: Int64

    public init(holdMicroseconds: Int64 = WorkoutBuilder.Configuration().holdMicroseconds) {
        self.holdMicroseconds = holdMicroseconds
    }

    /// Takes `sensor`'s readings at `timeMicroseconds`; returns the channels among them whose source it is now.
    public mutating func take(
        _ readings: [ChannelReading], from sensor: String, at timeMicroseconds: Int64
    ) -> Set<Channel> {
        connected(sensor)
        var chosen: Set<Channel> = []
        for reading in readings {
            latest[reading.channel, default: [:]][sensor] = (reading.rank, timeMicroseconds)
            let key = (reading.rank, order[sensor] ?? 0)
            let beaten = latest[reading.channel, default: [:]].contains { other, value in
                other != sensor && timeMicroseconds - value.atMicroseconds <= holdMicroseconds
                    && (value.rank, order[other] ?? 0) < key
            }
            if !beaten { chosen.insert(reading.channel) }
        }
        return chosen
    }

    /// A sensor connected: its place in the order sensors were heard in, as the ride's sensor list has it.
    public mutating func connected(_ sensor: String) {
        if order[sensor] == nil { order[sensor] = order.count }
    }

    /// A sensor that went away no longer holds any channel.
    public mutating func forget(_ sensor: String) {
        for channel in latest.keys { latest[channel]?[sensor] = nil }
    }
}
