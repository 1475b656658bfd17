import Foundation
import TestSupport
import Testing

/// The programs the tests start inherit nothing but their standard streams: a pipe another test has open when one
/// starts must end for its reader when that test closes it, even while the program runs on.
@Suite struct SpawnTests {
    /// Whether the read end of a pipe sees its end within 2 s of the write end being closed here.
    static func endSeen(whileRunning start: () throws -> pid_t) throws -> Bool {
        var ends: [Int32] = [0, 0]
        // Without O_CLOEXEC, as Foundation's `Pipe` makes them.
        #expect(pipe(&ends) == 0)
        let pid = try start()
        defer {
            kill(pid, SIGKILL)
            _ = waitProgramNow(pid, seconds: 5)
            close(ends[0])
        }
        close(ends[1])
        var reader = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        guard poll(&reader, 1, 2000) == 1 else { return false }
        var byte: UInt8 = 0
        return read(ends[0], &byte, 1) == 0
    }

    @Test("a program started by spawnProgram or ChildProcess holds no other test's pipe open")
    func noInheritedPipe() throws {
        #expect(try Self.endSeen { try spawnProgram("/bin/sleep", ["30"], environment: [:]) })
        #expect(try Self.endSeen { try ChildProcess(["/bin/sleep", "30"]).pid })
    }
}
