import Foundation

/// A program built by this package (`cyclelog`, `cyclelog-mirror`): test runners sit in the same build folder (or
/// one level below it).
public func builtBinary(_ name: String = "cyclelog") throws -> URL {
    let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent(name) }
    guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
        throw NSError(
            domain: "builtBinary", code: 1,
            userInfo: [NSLocalizedDescriptionKey: "\(name) is not built next to \(folder.path)"])
    }
    return binary
}

/// The built `cyclelog` binary.
public func cyclelogBinary() throws -> URL { try builtBinary() }
