import Foundation

/// The built `cyclelog` binary: test runners sit in the same build folder (or one level below it).
public func cyclelogBinary() throws -> URL {
    let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent("cyclelog") }
    guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
        throw NSError(
            domain: "cyclelogBinary", code: 1,
            userInfo: [NSLocalizedDescriptionKey: "cyclelog is not built next to \(folder.path)"])
    }
    return binary
}
