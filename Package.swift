// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "cyclelog",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "cyclelog", targets: ["cyclelog"]),
        .library(name: "CyclingSensors", targets: ["CyclingSensors"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        // Pure decoders and encoders for the Bluetooth GATT characteristics; no Foundation.
        .target(name: "CyclingSensors"),
        .executableTarget(
            name: "cyclelog",
            dependencies: [
                "CyclingSensors",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Decode throughput benchmark (`make bench`), release build only.
        .executableTarget(
            name: "DecodeBenchmark",
            dependencies: ["CyclingSensors"],
            path: "Benchmarks/DecodeBenchmark"
        ),
        .testTarget(name: "CyclingSensorsTests", dependencies: ["CyclingSensors"]),
        .testTarget(name: "CyclelogCLITests", dependencies: ["cyclelog"]),
    ],
    swiftLanguageModes: [.v6]
)
