// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "cyclelog",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "cyclelog", targets: ["cyclelog"]),
        .executable(name: "cyclelog-mirror", targets: ["cyclelog-mirror"]),
        .executable(name: "cyclelog-sync", targets: ["cyclelog-sync"]),
        .executable(name: "cyclelog-desktop", targets: ["cyclelog-desktop"]),
        .library(name: "CyclingSensors", targets: ["CyclingSensors"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        // SHA-256 for a ride's identity and content digest (README, "A ride's identity").
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        // The recorder as a service: graceful shutdown on SIGINT/SIGTERM; logging to standard error.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // The second screen's HTTP server (cyclelog-mirror): HTTP/1.1 on SwiftNIO, streamed responses for SSE.
        // Without its default traits (swift-configuration, full Foundation), which nothing here uses.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The shared store of rides (cyclelog-sync): PostgreSQL's wire protocol on SwiftNIO, TLS by swift-nio-ssl.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // The uploads' HTTPS client (RideUploads): TLS from swift-nio-ssl, which postgres-nio builds already.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
    ],
    targets: [
        // Pure decoders and encoders for the Bluetooth GATT characteristics; no Foundation.
        .target(name: "CyclingSensors"),
        // How values are written for people and programs: JSON values, UTC times, text cut and escaped for a
        // terminal; pure.
        .target(name: "Formats"),
        // How work runs: fork-join over the cores (`parallelMap`, `OrderedWork`), a broadcast to many async
        // subscribers, an actor's own thread (`QueueExecutor`), stage timing marks.
        .target(name: "Concurrency"),
        // A structured workout (steps and targets), its canonical text, the built-in ones and the player that
        // says what each step asks for as the ride's running time passes; pure.
        .target(name: "StructuredWorkouts", dependencies: ["Formats"]),
        // The workout files of other tools read (.zwo, .erg, .mrc, FIT) and written (.zwo, FIT); pure.
        .target(name: "WorkoutFiles", dependencies: ["Formats", "StructuredWorkouts", "FIT"]),
        // Revolution math, channel builders, the session state machine, the workout builder and statistics; pure.
        .target(name: "Workouts", dependencies: ["CyclingSensors", "Formats", "Concurrency", "StructuredWorkouts"]),
        // The smart trainer's control: what to write to its control point and when (modes, targets held within
        // what it declares, the cadence safety, ramps, power match, one write at a time); pure, clocked from outside.
        .target(name: "TrainerControl", dependencies: ["CyclingSensors", "Concurrency"]),
        // The box by the trainer as a sensor hub: what it re-broadcasts to the apps riders ride in, made from the
        // ride's fused channels (power, the crank's and the wheel's revolutions, heart rate); pure.
        .target(name: "SensorHub", dependencies: ["CyclingSensors", "Workouts", "TrainerControl"]),
        // zlib for the compressed raw journal kept with every ride.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CMalloc"),
        // libbluetooth's HCI ioctls behind plain functions (Debian: libbluetooth-dev).
        .target(name: "CBluetooth", linkerSettings: [.linkedLibrary("bluetooth")]),
        // libdbus-1, the reference D-Bus library, for talking to BlueZ and for the recorder's control object.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // libdbus loaded at the first D-Bus call, not at every start of a program (most commands never call it).
        .target(name: "CDBusLoader", dependencies: ["CDBus"]),
        // D-Bus connections as actors: method calls, signals as streams, exported objects; no BlueZ knowledge.
        .target(name: "DBus", dependencies: ["CDBus", "CDBusLoader", "Concurrency"]),
        // The org.bluez object model (adapters, devices, GATT, discovery, notify sessions); no cycling knowledge.
        .target(name: "BlueZ", dependencies: ["Concurrency", "ExitStatus", "DBus"]),
        // The cyclelog journal: its text form and its compact stored form (packing, zlib).
        .target(name: "RideJournal", dependencies: ["Formats", "Workouts", "StructuredWorkouts", "CZlib"]),
        // A ride's identity and content digest: SHA-256 over its journal's text (README, "A ride's identity").
        .target(
            name: "RideIdentity",
            dependencies: ["Formats", "RideJournal", "Workouts", .product(name: "Crypto", package: "swift-crypto")]),
        // btsnoop readers and the GATT replay of a capture: files in, ride events out.
        .target(name: "Capture", dependencies: ["CyclingSensors", "Workouts", "RideJournal"]),
        // SQLite through GRDB: workouts, laps, events, sensors, 1 Hz samples and the raw journal. GRDBSQLite for
        // the few C calls GRDB has no API for (a progress handler, WAL persistence).
        .target(
            name: "WorkoutStore",
            dependencies: [
                "Formats", "Concurrency",
                "ExitStatus", "Workouts", "RideJournal", "RideIdentity", "StructuredWorkouts",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // SVG pictures of a ride and of a power curve.
        .target(name: "Charts", dependencies: ["Formats", "Workouts"]),
        // The FIT container read and written byte by byte: headers, definitions, messages, CRCs; no activities.
        .target(name: "FIT"),
        // Stored rides as FIT activities, TCX and CSV files; pure.
        .target(name: "Export", dependencies: ["Formats", "FIT", "Workouts", "CyclingSensors"]),
        // Bike computers' FIT activity files as workouts (records, timer, laps, the device's totals); pure.
        .target(name: "FITImport", dependencies: ["FIT", "Workouts"]),
        // The recorder's D-Bus contract, shared by the recorder and its clients (the CLI's control verbs,
        // cyclelog-mirror): its names, its typed commands (`RecorderCommand`) and how its values read; no Bluetooth.
        .target(
            name: "RecorderInterface",
            dependencies: ["Formats", "DBus", "Workouts", "StructuredWorkouts", "TrainerControl"]),
        // What a failure means as an exit status, and the protocol of errors that say themselves in words.
        .target(name: "ExitStatus"),
        // A ride's events into its workout, journal and digests (`RidePipeline`, no I/O) and into the store in
        // batches (`WorkoutWriter`): the one path of replay, import, rebuild and the live recorder.
        .target(name: "RideWriting", dependencies: ["RideIdentity", "Workouts", "WorkoutStore"]),
        // The sources that are files: a capture's replay, a journal's rebuild, a FIT file's import.
        .target(
            name: "Recording",
            dependencies: [
                "Formats", "Concurrency",
                "ExitStatus", "RideWriting",
                "Capture", "RideJournal", "RideIdentity", "Workouts", "WorkoutStore", "CyclingSensors", "FIT",
                "FITImport",
            ]),
        // The live recorder: sensors over BlueZ into the pipeline and the store, the ride's rules and each sensor's
        // link as pure parts, the reconnect watchdog; no D-Bus object, no kernel interfaces.
        .target(
            name: "LiveRecording",
            dependencies: [
                "Concurrency",
                "ExitStatus", "BlueZ", "RideWriting", "WorkoutStore", "Workouts", "CyclingSensors", "TrainerControl",
                "StructuredWorkouts", "RecorderInterface", "DBus", "SensorHub",
            ]),
        // The sensor hub on Bluetooth: the recorder's live readings re-broadcast through a BlueZ peripheral on an
        // adapter of its own (`cyclelog record --bridge`).
        .target(
            name: "HubBridge",
            dependencies: [
                "BlueZ", "CyclingSensors", "DBus", "LiveRecording", "SensorHub", "TrainerControl", "Workouts",
            ]),
        // The recorder as a service: its D-Bus control object, the service's lifecycle and systemd notifications,
        // the sync trigger and the desktop launcher.
        .target(
            name: "RecorderService",
            dependencies: [
                "Formats",
                "LiveRecording", "DBus", "RecorderInterface", "Workouts",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Getting sensors and the adapter ready: sensor search, doctor, calibration, adapter facts from the kernel,
        // the HCI capture of a ride (the recorder tells it through `RideObserver`).
        .target(
            name: "SensorSetup",
            dependencies: [
                "Formats",
                "LiveRecording", "BlueZ", "DBus", "CBluetooth", "Capture", "RideJournal", "RideWriting", "WorkoutStore",
                "Workouts", "CyclingSensors",
            ]),
        // The stored rides as JSON and files for other programs: one source for the CLI's JSON and the mirror's
        // history API.
        .target(name: "RideHistory", dependencies: ["Formats", "Workouts", "WorkoutStore", "RideJournal", "Export"]),
        // The second screen: follows the recorder over D-Bus, pairs devices and serves them the ride over HTTP,
        // and the ride history from the database, read-only; the sensor hub over DirCon (TCP, `--dircon`).
        .target(
            name: "Mirror",
            dependencies: [
                "Formats",
                "DBus", "RecorderInterface", "Workouts", "RideHistory", "WorkoutStore", "Charts", "SensorHub",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // How the three programs end: their messages start with the program's name, not ArgumentParser's "Error: ".
        .target(
            name: "ProgramMain",
            dependencies: [
                "Formats",
                "ExitStatus", "Workouts", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "cyclelog-mirror",
            dependencies: [
                "Formats",
                "Mirror", "DBus", "RecorderInterface", "Workouts", "WorkoutStore", "CMalloc", "ProgramMain",
                "ExitStatus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // HTTPS for the page (`--tls-cert`): swift-nio-ssl, which postgres-nio builds already.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
        ),
        // The ride on the desktop outside any window: a StatusNotifierItem with its menu and the notifications,
        // following the recorder over D-Bus (`DesktopFace` decides, `DesktopItem` carries out).
        .target(
            name: "DesktopItem",
            dependencies: ["DBus", "Formats", "RecorderInterface", "TrainerControl", "Workouts", "WorkoutStore"]),
        .executableTarget(
            name: "cyclelog-desktop",
            dependencies: [
                "DesktopItem", "DBus", "RecorderInterface", "Workouts", "WorkoutStore", "ProgramMain", "ExitStatus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Rides kept consistent with a shared PostgreSQL by sync identifier and version: the server's schema, the
        // push rule, pull, tombstones; no Bluetooth.
        .target(
            name: "RideSync",
            dependencies: [
                "Formats",
                "ExitStatus",
                "WorkoutStore", "Recording", "RideHistory", "Workouts", "RideJournal", "StructuredWorkouts",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Rides uploaded to intervals.icu and Strava once per service by sync identity, and the coach's plan
        // fetched: the accounts, an HTTP/1.1 client on SwiftNIO, the services' APIs, the upload's rule; no Bluetooth.
        .target(
            name: "RideUploads",
            dependencies: [
                "Formats", "ExitStatus", "WorkoutStore", "RideHistory", "Workouts", "StructuredWorkouts",
                "WorkoutFiles",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        .executableTarget(
            name: "cyclelog-sync",
            dependencies: [
                "Formats", "RideUploads",
                "RideSync", "WorkoutStore", "Workouts", "ProgramMain", "ExitStatus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "cyclelog",
            dependencies: [
                "Formats", "Concurrency", "ExitStatus",
                "CMalloc", "TrainerControl", "StructuredWorkouts", "WorkoutFiles",
                "ProgramMain",
                "CyclingSensors",
                "Workouts",
                "Capture",
                "RideJournal",
                "WorkoutStore",
                "RideWriting",
                "Recording",
                "Charts",
                "Export",
                "BlueZ",
                "DBus",
                "LiveRecording",
                "HubBridge",
                "RecorderService",
                "SensorSetup",
                "RecorderInterface",
                "RideHistory",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
        ),
        // Decode throughput benchmark (`make bench`), release build only.
        .executableTarget(
            name: "DecodeBenchmark",
            dependencies: ["CyclingSensors"],
            path: "Benchmarks/DecodeBenchmark"
        ),
        // Power-curve and FTP benchmark (`make bench`), release build only.
        .executableTarget(
            name: "MetricsBenchmark",
            dependencies: ["Workouts", "WorkoutStore", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/MetricsBenchmark"
        ),
        // Structured workouts' benchmark (`make bench`): workout files of 1000 steps read, the player, compliance.
        .executableTarget(
            name: "WorkoutBenchmark",
            dependencies: ["StructuredWorkouts", "WorkoutFiles", "Workouts", "FIT"],
            path: "Benchmarks/WorkoutBenchmark"
        ),
        // What several test targets share (a seeded generator).
        .target(name: "TestSupport", dependencies: ["BlueZ", "DBus"], path: "Tests/TestSupport"),
        // Rides stored in a database in memory through the replay, for the libraries above the store.
        .target(
            name: "RideTestSupport",
            dependencies: ["Recording", "WorkoutStore", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/RideTestSupport"),
        .testTarget(name: "FormatsTests", dependencies: ["Formats"]),
        .testTarget(name: "ConcurrencyTests", dependencies: ["Concurrency"]),
        .testTarget(name: "CyclingSensorsTests", dependencies: ["CyclingSensors", "TestSupport"]),
        .testTarget(name: "TrainerControlTests", dependencies: ["TrainerControl", "CyclingSensors", "TestSupport"]),
        .testTarget(
            name: "SensorHubTests", dependencies: ["SensorHub", "CyclingSensors", "Workouts", "TrainerControl"]),
        .testTarget(
            name: "HubBridgeTests",
            dependencies: ["HubBridge", "BlueZ", "CyclingSensors", "DBus", "LiveRecording", "TestSupport", "Workouts"]),
        .testTarget(
            name: "StructuredWorkoutsTests", dependencies: ["StructuredWorkouts", "Workouts"]),
        .testTarget(name: "WorkoutFilesTests", dependencies: ["WorkoutFiles", "StructuredWorkouts", "FIT"]),
        .testTarget(
            name: "WorkoutsTests",
            dependencies: [
                "Formats", "Concurrency", "Workouts", "CyclingSensors", "StructuredWorkouts", "TestSupport",
            ]),
        .testTarget(
            name: "CaptureTests",
            dependencies: ["Capture", "RideJournal", "Workouts", "CyclingSensors", "TestSupport"]),
        .testTarget(name: "WorkoutStoreTests", dependencies: ["WorkoutStore", "Workouts", "RideJournal"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "DesktopItemTests", dependencies: ["DesktopItem", "DBus", "RecorderInterface", "Workouts"]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "DBus", "TestSupport"]),
        .testTarget(
            name: "RideJournalTests",
            dependencies: ["RideJournal", "Capture", "Workouts", "StructuredWorkouts", "TestSupport"]),
        .testTarget(name: "RideIdentityTests", dependencies: ["RideIdentity", "RideJournal", "Workouts"]),
        .testTarget(name: "FITImportTests", dependencies: ["Formats", "FITImport", "FIT", "Workouts", "TestSupport"]),
        .testTarget(
            name: "MirrorTests",
            dependencies: ["Mirror", "DBus", "RecorderInterface", "WorkoutStore", "RideTestSupport", "TestSupport"]),
        .testTarget(
            name: "RecordingTests", dependencies: ["Recording", "WorkoutStore", "RideTestSupport", "TestSupport"]),
        .testTarget(
            name: "RideHistoryTests", dependencies: ["RideHistory", "WorkoutStore", "RideTestSupport", "TestSupport"]),
        .testTarget(
            name: "ChartsTests",
            dependencies: ["Charts", "Workouts", "WorkoutStore", "RideTestSupport", "TestSupport"]),
        .testTarget(name: "ExportTests", dependencies: ["Export", "WorkoutStore", "RideTestSupport", "TestSupport"]),
        .testTarget(
            name: "RecorderInterfaceTests",
            dependencies: ["RecorderInterface", "DBus", "Workouts", "StructuredWorkouts", "TrainerControl"]),
        .testTarget(name: "FITTests", dependencies: ["FIT", "FITImport", "Workouts", "TestSupport"]),
        .testTarget(
            name: "LiveRecordingTests",
            dependencies: [
                "LiveRecording", "BlueZ", "Recording", "WorkoutStore", "Workouts", "TestSupport", "CyclingSensors",
                "TrainerControl", "RideJournal", "StructuredWorkouts", "RecorderInterface",
            ]),
        .testTarget(
            name: "RecorderServiceTests",
            dependencies: [
                "RecorderService", "LiveRecording", "BlueZ", "DBus", "Recording", "WorkoutStore", "Workouts", "Capture",
                "RideJournal", "TestSupport", "RecorderInterface",
            ]),
        .testTarget(
            name: "SensorSetupTests", dependencies: ["SensorSetup", "LiveRecording", "BlueZ", "DBus", "CBluetooth"]),
        .testTarget(
            name: "RideSyncTests",
            dependencies: [
                "RideSync", "RideUploads", "WorkoutStore", "Recording", "Workouts", "RideJournal", "TestSupport",
                "RideTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "RideUploadsTests",
            dependencies: [
                "RideUploads", "WorkoutStore", "RideTestSupport", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "RideWritingTests", dependencies: ["RideWriting", "WorkoutStore", "Workouts", "RideTestSupport"]),
        // GRDB to damage, lock and forge databases the way other programs and failing disks do.
        .testTarget(
            name: "CyclelogCLITests",
            dependencies: [
                "Formats",
                "cyclelog", "cyclelog-mirror", "WorkoutStore", "TestSupport", "LiveRecording", "RecorderService",
                "SensorSetup",
                "DBus", "BlueZ",
                "Capture", "Workouts", "RecorderInterface", "Mirror", "RideHistory", "StructuredWorkouts",
                "WorkoutFiles", "TrainerControl",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
