/// Where the recorder stands (D-Bus `State`): a ride's state (`Session.State`'s words), or while no ride is
/// recorded `waiting` (for a Start or, with `--auto`, for pedalling) and `armed` (a Start waits for the first pedal
/// stroke). The raw values are the property's documented words.
public enum RecorderState: String, Sendable, CaseIterable {
    /// A plain `record` whose ride's row is being opened.
    case notStarted
    case running
    case paused
    case ended
    case cancelled
    case waiting
    case armed
}

/// A sensor's link as the status shows it (D-Bus `Sensors`, the dashboard, the phone).
public enum SensorState: String, Sendable, CaseIterable {
    /// Not seen yet (scanning for it).
    case searching
    case connecting
    /// Notifications arriving.
    case streaming
    /// Connected, notifications arriving, but no revolutions (coasting or stopped).
    case zero
    /// Connected but silent for several expected intervals.
    case stale
    /// The link was lost; connecting again with backoff.
    case reconnecting

    /// Connected, whether notifications arrive or not.
    public var isConnected: Bool { self == .streaming || self == .zero || self == .stale }
}
