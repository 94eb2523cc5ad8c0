// swift-tools-version:6.0
import PackageDescription
import class Foundation.ProcessInfo

// Pacer: a running wearable's daemon. A pure core (PacerCore) and one thin adapter module
// per C library; see README.md for the layout.
let package = Package(
    name: "Pacer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "pacerd", targets: ["pacerd"]),
        .executable(name: "pacerctl", targets: ["pacerctl"]),
        .executable(name: "pacer-cloud", targets: ["pacer-cloud"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // pacer-cloud (the backend) only: HTTP server, PostgreSQL, webhooks, SHA-256 and HMAC.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // Already there for the packages above; named so that pacer-cloud's SMTP client can do
        // STARTTLS (NIOSSL) and PostgreSQL TLS can be configured.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // pacer-cloud's accounts: bcrypt password hashes, and the server-rendered pages' templates.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // pacer-cloud's /metrics: swift-metrics' counters and timers, kept and written out in
        // Prometheus' text format by swift-prometheus.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // pacer-cloud's store: every query written once over SQLKit, on PostgreSQL (postgres-kit,
        // over PostgresNIO's pool) and SQLite (sqlite-kit, over SQLiteNIO).
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/postgres-kit", from: "2.17.0"),
        .package(url: "https://github.com/vapor/sqlite-kit", from: "4.5.2"),
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
        // Plain threads for blocking C calls, their wake-up channel, and the two clocks (monotonic and
        // wall): the only place that reads one.
        .target(name: "Threads"),
        .target(name: "GPSD", dependencies: ["CGPS", "PacerCore", "Threads"]),

        // libsystemd: sd_notify, the watchdog, sd_journal_sendv (and sd-bus later). Only Systemd imports it.
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(name: "Systemd", dependencies: ["CSystemd", "Threads"]),

        // libespeak-ng: text to PCM. Only Speech imports it.
        .systemLibrary(
            name: "CEspeakNG",
            pkgConfig: "espeak-ng",
            providers: [.apt(["libespeak-ng-dev"])]
        ),
        // libasound: PCM to the sound card. Only Speech imports it.
        .systemLibrary(
            name: "CALSA",
            pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]
        ),
        // Spoken cues: one thread owns espeak-ng; the arbiter (priorities, pre-emption, staleness,
        // mute) decides what is said; PCM goes to ALSA, WAV files or nowhere.
        .target(name: "Speech", dependencies: ["CEspeakNG", "CALSA", "PacerCore", "Threads"]),

        // libcurl (OpenSSL flavour), dlopen()ed at the first request rather than linked: linked,
        // its dependencies cost pacerd ~9 MB of RSS at rest. Only HTTPClient imports it. Its
        // header comes from libcurl4-openssl-dev (tools/setup).
        .target(name: "CCurl"),
        // A small HTTP(S) client: each request's blocking curl_easy_perform on its own thread.
        .target(name: "HTTPClient", dependencies: ["CCurl", "Threads"]),

        // <link.h> and <malloc.h>: pacerd trims its resident memory (PacerDaemon/ResidentMemory).
        .target(name: "CLoadedObjects"),

        // zlib: run chunks are gzipped by the uplink and gunzipped by the cloud. Only Gzip imports it.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // gzip (RFC 1952) over zlib, for both ends: the device compresses, the cloud inflates.
        .target(name: "Gzip", dependencies: ["CZlib"]),
        // The device-cloud contract (Sources/PacerCloud/openapi.yaml) as types, written once for
        // both ends: the alert body, the live position, the run summary, the track chunk format,
        // wire times and the ranges the cloud takes. Pure: no I/O, no Foundation.
        .target(name: "PacerContract", dependencies: ["PacerCore"]),
        // Store and forward: finished runs (gzipped chunks) and the live position to the cloud,
        // from the outbox in the run store, on a thread of its own.
        .target(name: "Uplink", dependencies: ["Gzip", "PacerContract", "HTTPClient", "Store", "PacerCore", "Threads"]),
        // The sync channel: what the cloud has for the device (notices said once, the profile),
        // fetched on a thread and connection of its own, kept for offline use; the heartbeat.
        .target(name: "CloudSync", dependencies: ["PacerContract", "PacerConfig", "PacerCore", "PacerSession", "HTTPClient", "Threads"]),

        // BlueZ's D-Bus API (Adapter1, Device1, GattCharacteristic1, Battery1) over Systemd's bus:
        // the paired heart-rate strap found, connected, notifying, and held on to.
        .target(name: "BlueZ", dependencies: ["Systemd", "PacerCore", "Threads"]),
        // ModemManager's D-Bus API (Modem, Modem.Messaging, Sms) over Systemd's bus: text messages
        // (SOS) sent through whichever modem ModemManager has.
        .target(name: "ModemManager", dependencies: ["Systemd"]),

        // The control socket: JSON-lines requests and replies, the server (SO_PEERCRED) and the client.
        .target(name: "Control", exclude: ["PROTOCOL.md"]),

        // Buttons: evdev key events read on their own thread.
        .target(name: "Buttons", dependencies: ["Threads"]),

        // libsqlite3, for the device's stores. Only SQLite imports it.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The device's SQLite connections: a queue per connection, transactions, rows, migrations.
        // Not GRDB, which imports all of Foundation and so links ICU's 30 MB of data into pacerd.
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        // Runs on disk: SQLite, durable batches, crash recovery, history queries.
        .target(name: "Store", dependencies: ["PacerCore", "SQLite"]),
        // The SOS lane: the core's watcher on its own thread, alerts in their own SQLite file,
        // delivered on every channel (SMS, HTTPS, hook) until acknowledged.
        .target(
            name: "SOS",
            dependencies: ["PacerCore", "PacerContract", "Threads", "ModemManager", "HTTPClient", "SQLite"]
        ),
        // GPX 1.1 and TCX writers, streamed point by point.
        .target(name: "Export", dependencies: ["PacerCore"]),
        // "My runs" as shown: the list and a run's detail (JSON or text) and its exports, the same
        // from pacerctl reading a store file and from pacerd answering on its socket.
        .target(name: "RunViews", dependencies: ["PacerCore", "PacerReplay", "Store", "Export"]),

        // Offline replay of recorded gpsd/HR logs through the core; shared by pacerctl and tests.
        .target(name: "PacerReplay", dependencies: ["PacerCore", "GPSD"]),
        // One run being recorded: the core's decisions and the raw lines into the store, in durable
        // batches. The daemon and `pacerctl replay --record` share it, so live equals replay.
        .target(name: "Recording", dependencies: ["PacerCore", "GPSD", "PacerReplay", "Store"]),

        // The run session as a pure reducer (RunSession) and its parts: strap state, resume policy,
        // status wording. Inputs and time in, actions and journal notes out; no I/O, no clocks, no
        // Foundation. PacerDaemon's pipeline thread carries the actions out.
        .target(name: "PacerSession", dependencies: ["PacerCore", "PacerConfig", "PacerContract"]),

        // The daemon: live services composed with swift-service-lifecycle.
        .target(
            name: "PacerDaemon",
            dependencies: [
                "PacerCore", "PacerConfig", "PacerSession", "GPSD", "PacerReplay", "Recording", "RunViews", "Store", "Systemd", "BlueZ", "Control", "Buttons", "Threads", "Speech",
                "SOS", "ModemManager", "HTTPClient", "Uplink", "CloudSync", "PacerContract", "CLoadedObjects",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Started as "pacerctl" (the package's /usr/bin/pacerctl links to it), pacerd is pacerctl.
        .executableTarget(name: "pacerd", dependencies: ["PacerDaemon", "PacerConfig", "PacerCtlCommands"]),
        // The backend's model: the records its store keeps and returns, and the rules about them
        // (link codes, addresses, the plan's calendar, tokens). Pure: no NIO, no database, no HTTP,
        // no logging (tools/lint-sources checks its imports).
        .target(
            name: "CloudModel",
            dependencies: ["Gzip", "PacerContract", "PacerCore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The backend's store: one repository per feature over SQLite or PostgreSQL (SQLKit), the
        // migrations, backups.
        .target(
            name: "CloudStore",
            dependencies: [
                "CloudModel", "PacerContract", "Threads",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The backend: runs, live position and SOS alerts from devices, in SQLite or PostgreSQL.
        .target(
            name: "PacerCloud",
            dependencies: [
                "CloudModel", "CloudStore", "Gzip", "PacerContract", "Export", "Threads",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            exclude: ["openapi.yaml"]
        ),
        .executableTarget(
            name: "pacer-cloud",
            dependencies: ["PacerCloud", "CloudModel", "CloudStore", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // pacerctl's commands: the pacerctl binary, and pacerd started under that name.
        .target(
            name: "PacerCtlCommands",
            dependencies: [
                "PacerReplay",
                "PacerConfig",
                "PacerContract",
                "CloudSync",
                "Recording",
                "Store",
                "RunViews",
                "Control",
                "Speech",
                "Threads",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "pacerctl", dependencies: ["PacerCtlCommands"]),

        // Test fixtures: gpsfake on a free port, pacerd and pacer-cloud (the built binaries of the
        // test targets that depend on them) and simulators as child processes, stopped by PID.
        .target(name: "PacerTestSupport", dependencies: ["Threads"], path: "Tests/PacerTestSupport"),

        .testTarget(name: "PacerCoreTests", dependencies: ["PacerCore"]),
        .testTarget(name: "PacerConfigTests", dependencies: ["PacerConfig", "PacerCore"]),
        .testTarget(name: "PacerSessionTests", dependencies: ["PacerSession", "PacerConfig", "PacerContract", "PacerCore"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "PacerCore", "SQLite"]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "Store", "PacerReplay", "GPSD", "PacerCore"]),
        .testTarget(name: "ExportTests", dependencies: ["Export", "PacerCore", "PacerTestSupport"]),
        .testTarget(name: "GPSDTests", dependencies: ["GPSD", "PacerCore", "PacerTestSupport"]),
        .testTarget(name: "SystemdTests", dependencies: ["Systemd", "Threads", "PacerTestSupport"]),
        // The BlueZ client against tools/bluez-sim (a simulated bluetoothd) on a private dbus-daemon.
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "Systemd", "PacerCore", "PacerTestSupport"]),
        // The SMS sender against tools/modemmanager-sim (a simulated ModemManager) on a private dbus-daemon.
        .testTarget(name: "ModemManagerTests", dependencies: ["ModemManager", "Systemd", "PacerTestSupport"]),
        // espeak-ng to WAV (checked with sox), the arbiter, the speech thread.
        .testTarget(name: "SpeechTests", dependencies: ["Speech", "PacerCore", "PacerTestSupport"]),
        .testTarget(name: "ControlTests", dependencies: ["Control", "PacerTestSupport"]),
        .testTarget(name: "ButtonsTests", dependencies: ["Buttons", "PacerCore", "Threads", "PacerTestSupport"]),
        // The HTTP client against tools/https-sink (HTTPS with a throwaway CA) on 127.0.0.1.
        .testTarget(name: "HTTPClientTests", dependencies: ["HTTPClient", "PacerTestSupport"]),
        // Runs the built pacerd under gpsfake: lifecycle, notify, control, faults.
        .testTarget(
            name: "PacerDaemonTests",
            dependencies: ["PacerDaemon", "pacerd", "pacerctl", "pacer-cloud", "Store", "PacerCore", "PacerTestSupport"]
        ),
        // One pacerd life with everything real: gpsd (gpsfake, restarted), the simulated strap and
        // ModemManager on a private dbus-daemon, espeak-ng into WAV files, pacer-cloud (SQLite).
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["pacerd", "pacerctl", "pacer-cloud", "Store", "PacerCore", "PacerContract", "PacerTestSupport"]
        ),
        // Runs the built pacerctl binary: exit statuses and messages as an operator sees them.
        .testTarget(name: "pacerctlTests", dependencies: ["pacerctl", "Store", "PacerCore", "PacerTestSupport"]),
        // The uplink against tools/https-sink: order, retries, privacy zones, a wrong certificate.
        .testTarget(name: "UplinkTests", dependencies: ["Uplink", "Gzip", "PacerContract", "Store", "PacerCore", "HTTPClient", "PacerTestSupport"]),
        // The sync channel's schedule and files, with a scripted transport (no network, no waiting).
        .testTarget(name: "CloudSyncTests", dependencies: ["CloudSync", "HTTPClient", "PacerContract", "PacerConfig", "PacerCore", "PacerTestSupport"]),
        // The contract against openapi.yaml both ways (tools/check-contract, jsonschema), and its formats.
        .testTarget(name: "PacerContractTests", dependencies: ["PacerContract", "PacerCore", "PacerTestSupport"]),
        .testTarget(name: "PacerReplayTests", dependencies: ["PacerReplay", "PacerCore", "GPSD", "PacerConfig"]),
        // The SOS lane in-process: its alert store, the hook channel, the lane with fake channels.
        .testTarget(name: "SOSUnitTests", dependencies: ["SOS", "PacerCore", "ModemManager", "Threads", "PacerTestSupport", "SQLite"]),
        // pacer-cloud's API, each case against SQLite and against a PostgreSQL the test starts; its CLI as the built binary.
        .testTarget(
            name: "PacerCloudTests",
            dependencies: [
                "PacerCloud", "CloudModel", "CloudStore", "PacerContract", "Gzip", "PacerTestSupport", "pacer-cloud", "Export", "PacerCore", "Threads",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer target for the Heart Rate Measurement parser. It has no main of its own (libFuzzer
// brings it), so it only exists when tools/fuzz-hrm asks for it; plain builds stay linkable.
// tools/bench-sos's in-process benchmark of the SOS lane under load; built only when asked for.
if ProcessInfo.processInfo.environment["PACER_BENCH"] != nil {
    package.products.append(.executable(name: "bench-sos", targets: ["BenchSOS"]))
    package.targets.append(.executableTarget(
        name: "BenchSOS", dependencies: ["SOS", "Store", "Speech", "HTTPClient", "ModemManager", "Systemd", "PacerCore", "Threads"],
        path: "Benchmarks/BenchSOS"))
}

if ProcessInfo.processInfo.environment["PACER_FUZZ"] != nil {
    package.products.append(.executable(name: "fuzz-hrm", targets: ["FuzzHRM"]))
    package.targets.append(.executableTarget(name: "FuzzHRM", dependencies: ["PacerCore"], path: "Fuzz/FuzzHRM"))
}

// The device's programs alone (pacerd, pacerctl), for tools/build-deb --arch arm64: its compiler,
// Debian's Swift 6.2.3, cannot load hummingbird's trait-guarded dependency on swift-configuration
// ("product 'Configuration' required by package 'hummingbird' ... not found"), and the device
// needs none of the backend's packages.
if ProcessInfo.processInfo.environment["PACER_DEVICE_ONLY"] != nil {
    let backendPackages = [
        "hummingbird", "postgres-nio", "async-http-client", "swift-crypto", "swift-nio", "swift-nio-ssl",
        "hummingbird-auth", "swift-mustache", "swift-metrics", "swift-prometheus", "sql-kit", "postgres-kit", "sqlite-kit",
    ]
    package.dependencies.removeAll { dependency in
        guard case .sourceControl(_, let location, _) = dependency.kind else { return false }
        return backendPackages.contains { location.hasSuffix("/" + $0) }
    }
    let backendTargets: Set<String> = ["CloudModel", "CloudStore", "PacerCloud", "pacer-cloud", "PacerCloudTests", "PacerDaemonTests", "EndToEndTests"]
    package.targets.removeAll { backendTargets.contains($0.name) }
    package.products.removeAll { $0.name == "pacer-cloud" }
}
