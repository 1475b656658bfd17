import ExitStatus
import Formats
import Foundation
import ProgramMain
import Workouts

/// A warning or an error on standard error (ProgramMain's `sayOnStandardError`).
func printError(_ text: String) { sayOnStandardError(text) }

/// Every command's standard output goes through here, never through Swift's `print`: text that came from outside
/// (a sensor's name over the air, a ride's name, a marker) can then never clear the screen or retitle the
/// terminal. The live dashboard, which draws with escape sequences on purpose, writes through `StandardStream`.
func sayOnStandardOutput(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    Swift.print(ShownText.visible(text, keepingLayout: true), terminator: terminator)
}

/// Where `export -o` and `chart -o` put what they make, as a rider expects of a Unix tool: `-` is standard
/// output; a device, a pipe or a socket is written into as it is (`-o /dev/null` never replaces the device); a
/// symbolic link is followed and its target replaced; a regular file is replaced atomically (a new file renamed
/// over it), so a failed write never leaves half a file.
enum OutputFile {
    /// Writes `bytes` to `path`; the error says what went wrong in words.
    static func write(_ bytes: [UInt8], to path: String) throws(OutputError) {
        if path == "-" {
            StandardStream.output.write(bytes)
            return
        }
        let target = followingLinks(path)
        var status = stat()
        if stat(target, &status) == 0 {
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                throw OutputError("\(path) is a folder; name a file in it")
            case S_IFREG:
                break
            default:
                try writeInPlace(bytes, to: target, shownAs: path)
                return
            }
        }
        try replaceAtomically(bytes, at: target, shownAs: path)
    }

    /// The file a chain of symbolic links ends at, even one that does not exist yet (a dangling link is written
    /// through, as `>` in a shell does).
    static func followingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var status = stat()
            guard lstat(current, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length > 0 else { return current }
            let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current =
                link.hasPrefix("/")
                ? link
                : ((current as NSString).deletingLastPathComponent as NSString)
                    .appendingPathComponent(link)
        }
        return current
    }

    /// Whether `path` names something that is not a folder (a file, a device, a pipe, a link to one).
    static func isExistingNonFolder(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFDIR
    }

    /// A new file beside the target, written and synced, then renamed over it.
    private static func replaceAtomically(_ bytes: [UInt8], at target: String, shownAs path: String)
        throws(OutputError)
    {
        let folder = (target as NSString).deletingLastPathComponent
        var template = Array(((folder.isEmpty ? "." : folder) + "/.cyclelog-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkstemp($0) } ?? -1
        }
        guard descriptor >= 0 else { throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))") }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var open = true
        do throws(OutputError) {
            try writeAll(bytes, to: descriptor, shownAs: path)
            // mkstemp makes the file 0600; an exported ride is as readable as any file the rider makes.
            let mask = umask(0)
            umask(mask)
            fchmod(descriptor, 0o666 & ~mask)
            guard fsync(descriptor) == 0 else {
                throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            open = false
            guard close(descriptor) == 0 else {
                throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            guard rename(temporary, target) == 0 else {
                throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
        } catch {
            if open { close(descriptor) }
            unlink(temporary)
            throw error
        }
    }

    /// A device, a pipe or a socket: opened for writing and written, never replaced.
    private static func writeInPlace(_ bytes: [UInt8], to target: String, shownAs path: String) throws(OutputError) {
        let descriptor = open(target, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        try writeAll(bytes, to: descriptor, shownAs: path)
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, shownAs path: String) throws(OutputError) {
        var rest = bytes[...]
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                rest = rest.dropFirst(written)
            } else if !(written < 0 && errno == EINTR) {
                throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// An output file that cannot be written: a local file the program was given and cannot use (exit 2).
struct OutputError: ExplainedError {
    var description: String
    var exitStatus: ExitStatus { .cannotUse }
    init(_ description: String) { self.description = description }
}
