import Glibc

/// Where a command's time goes (`CYCLELOG_STAGES=1`): each mark writes `stage LABEL MILLISECONDS` to standard
/// error, the time on the monotonic clock, which a caller that started the process on the same clock turns into
/// the time since the start (`Benchmarks/replay_bench.py` prints a replay's stages so). Off, a mark costs one
/// test of a flag read once.
public enum Stages {
    private static let enabled = getenv("CYCLELOG_STAGES") != nil

    public static func mark(_ label: StaticString) {
        guard enabled else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let milliseconds = Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
        let line = "stage \(label) \(milliseconds)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
