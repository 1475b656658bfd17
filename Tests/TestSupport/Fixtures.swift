import Foundation

/// The repository's Fixtures folder (Fixtures/README.md says where each file came from).
public let fixturesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures")
