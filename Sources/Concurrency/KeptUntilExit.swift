/// What a command is done with as the process is about to end, kept rather than freed: freeing a capture's
/// 100 000 events one by one (their value lists and addresses) took 4–5 ms at the end of a replay, work the
/// kernel does at once when it takes the process's memory back.
public enum KeptUntilExit {
    private final class Box<Value> {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Keeps `value` for as long as the process lives. Only for the last large value of a command that exits
    /// next: what is kept is never given back.
    public static func keep<Value>(_ value: consuming Value) {
        _ = Unmanaged.passRetained(Box(value))
    }
}
