import Foundation
import LiveRecording
import Workouts

/// `record --sync-trigger FILE`: after each saved ride the recorder rewrites FILE with the ride's sync identifier
/// and version. A systemd path unit watching FILE (`cyclelog-sync.path`, `PathChanged=`) then starts the one-shot
/// sync, so the ride reaches the shared store seconds after it is saved while the recorder stays without network:
/// it only writes a file in its own state folder.
public struct SavedRideSignal: RideObserver {
    public let path: String

    public init(path: String) { self.path = path }

    /// The line written for a ride: `SYNC-IDENTIFIER VERSION`.
    public static func line(_ summary: WorkoutSummary) -> String {
        "\(summary.syncIdentifier) \(summary.version)\n"
    }

    /// Writes the line and closes the file (the close is what `PathChanged=` waits for). The problem in words
    /// when the file cannot be written; the ride is saved either way.
    public func announce(_ summary: WorkoutSummary) -> String? {
        // Not through a symbolic link: the file is in a folder others may write to only if set up that way.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard descriptor >= 0 else { return problem(errno) }
        let bytes = Array(Self.line(summary).utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let writeError = written == bytes.count ? 0 : (written < 0 ? errno : EIO)
        let closeError = close(descriptor) == 0 ? 0 : errno
        if writeError != 0 { return problem(writeError) }
        if closeError != 0 { return problem(closeError) }
        return nil
    }

    private func problem(_ code: Int32) -> String {
        "the ride is saved, but the sync trigger \(path) could not be written (\(String(cString: strerror(code)))): "
            + "cyclelog-sync sends it at its next timer run"
    }
}
