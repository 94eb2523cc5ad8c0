// swift-tools-version:6.0
import PackageDescription

// Pacer: a running wearable's daemon. A pure core (PacerCore) and one thin adapter module
// per C library; see README.md for the layout.
let package = Package(
    name: "Pacer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "pacerd", targets: ["pacerd"]),
        .executable(name: "pacerctl", targets: ["pacerctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        // Pure: samples and time in, decisions out. No I/O, no clocks, no Foundation.
        .target(name: "PacerCore"),
        // Config file parsing: text in, typed configuration or a located error out.
        .target(name: "PacerConfig", dependencies: ["PacerCore"]),

        // libgps (gpsd 3.22, API 11). Only GPSD imports it.
        .systemLibrary(
            name: "CGPS",
            pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]
        ),
        .target(name: "GPSD", dependencies: ["CGPS", "PacerCore"]),

        // Runs on disk: SQLite through GRDB, durable batches, crash recovery, history queries.
        .target(
            name: "Store",
            dependencies: ["PacerCore", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // GPX 1.1 and TCX writers, streamed point by point.
        .target(name: "Export", dependencies: ["PacerCore"]),

        // Offline replay of recorded gpsd/HR logs through the core; shared by pacerctl and tests.
        .target(name: "PacerReplay", dependencies: ["PacerCore", "GPSD"]),
        // One run being recorded: the core's decisions and the raw lines into the store, in durable
        // batches. The daemon and `pacerctl replay --record` share it, so live equals replay.
        .target(name: "Recording", dependencies: ["PacerCore", "GPSD", "PacerReplay", "Store"]),

        .executableTarget(name: "pacerd", dependencies: ["PacerCore", "GPSD"]),
        .executableTarget(
            name: "pacerctl",
            dependencies: [
                "PacerReplay",
                "PacerConfig",
                "Recording",
                "Store",
                "Export",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        .testTarget(name: "PacerCoreTests", dependencies: ["PacerCore"]),
        .testTarget(name: "PacerConfigTests", dependencies: ["PacerConfig", "PacerCore"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "PacerCore"]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "Store", "PacerReplay", "GPSD", "PacerCore"]),
        .testTarget(name: "ExportTests", dependencies: ["Export", "PacerCore"]),
        .testTarget(name: "GPSDTests", dependencies: ["GPSD", "PacerCore"]),
        // Runs the built pacerctl binary: exit statuses and messages as an operator sees them.
        .testTarget(name: "pacerctlTests", dependencies: ["pacerctl", "Store", "PacerCore"]),
        .testTarget(name: "PacerReplayTests", dependencies: ["PacerReplay", "PacerCore", "GPSD"]),
    ],
    swiftLanguageModes: [.v6]
)
