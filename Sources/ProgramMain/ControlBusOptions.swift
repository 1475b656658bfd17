import ArgumentParser
import Foundation

/// `--control-bus`: the bus on which `cyclelog` finds the recorder's control object and `cyclelog-mirror`'s
/// commands find the running mirror, one option for both programs.
public struct ControlBusOptions: ParsableArguments {
    @Option(
        help:
            "The bus of the recorder's control object: session, system or an address (default: $CYCLELOG_CONTROL_BUS, else session)."
    )
    public var controlBus: String?

    public init() {}

    /// The bus given by `--control-bus` or `CYCLELOG_CONTROL_BUS`; nil when neither names one (an empty value
    /// names none).
    public var named: String? {
        (controlBus ?? ProcessInfo.processInfo.environment["CYCLELOG_CONTROL_BUS"]).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The bus to use, as `BusAddress` reads it: the one named, else the session bus.
    public var busName: String { named ?? "session" }
}
