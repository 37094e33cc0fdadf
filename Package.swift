// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SerialDB",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SerialDB", targets: ["SerialDB"]),
        .executable(name: "stress", targets: ["stress"]),
        .executable(name: "bench", targets: ["bench"]),
        .executable(name: "serialdb", targets: ["serialdb"]),
        .library(name: "SerialDBSync", targets: ["SerialDBSync"]),
        .library(name: "SerialDBSyncServer", targets: ["SerialDBSyncServer"]),
        .executable(name: "serialdb-sync-server", targets: ["serialdb-sync-server"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Test and benchmark support in C: a fault-injecting VFS and the raw C API baseline.
        .target(name: "CSQLiteShims", dependencies: ["CSQLite"]),
        .target(name: "SerialDB", dependencies: ["CSQLite"]),
        // What the stress harness, the benchmark and the tests share: a locked box, a scratch
        // directory, a seeded generator. Not part of the library.
        .target(name: "HarnessSupport"),
        // How every executable reads its command line: one option reader, one exit-status
        // convention. Not part of the library.
        .target(name: "ToolArguments"),
        .executableTarget(name: "serialdb", dependencies: ["SerialDB", "SerialDBSync", "ToolArguments"]),
        // Table sync, client side: beside the core, which never imports it; no C library of its own.
        // The wire protocol, shared by client and server: every message both ways, the values
        // and their affinity rules, the limits, the upload rule, the JSON codec. Knows nothing
        // of the core (.ci/check-layers checks it), so that any program can speak the protocol.
        .target(name: "SerialDBSyncWire"),
        .target(name: "SerialDBSync", dependencies: ["SerialDB", "SerialDBSyncWire"]),
        // Table sync, server side: beside the core, which never imports it.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // OpenSSL's libcrypto, for the server's JWT sign-in: never a dependency of the client or the core.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .target(
            name: "SerialDBSyncServer",
            dependencies: ["SerialDB", "SerialDBSyncWire", "CMicroHTTPD", "CLibPQ", "CLibCrypto"]),
        // A throwaway PostgreSQL for the tests and the benchmark: a server URL from the
        // environment or a cluster of its own, and a fresh database per use. Not part of the library.
        .target(name: "PostgresHarness", dependencies: ["CLibPQ", "HarnessSupport", "SerialDB"]),
        .executableTarget(name: "serialdb-sync-server", dependencies: ["SerialDBSyncServer", "ToolArguments"]),
        .executableTarget(
            name: "stress",
            dependencies: [
                "SerialDB", "CSQLiteShims", "HarnessSupport", "SerialDBSync", "SerialDBSyncServer", "SerialDBSyncWire",
                "ToolArguments",
            ],
            path: "Stress", exclude: ["results"]),
        .executableTarget(
            name: "bench",
            dependencies: [
                "SerialDB", "CSQLiteShims", "HarnessSupport", "SerialDBSync", "SerialDBSyncServer", "SerialDBSyncWire",
                "PostgresHarness", "ToolArguments",
            ],
            path: "Benchmarks", exclude: ["results"]),
        // Caps how many test cases run at once (twice the cores), so that an async test's steps
        // do not queue behind the whole run's not-yet-started tests (TestRunWidth.c says why).
        .target(name: "CTestRunWidth", path: "Tests/CTestRunWidth"),
        .target(
            name: "SerialDBTestSupport", dependencies: ["SerialDB", "HarnessSupport", "CTestRunWidth"],
            path: "Tests/SerialDBTestSupport"),
        // A child process for tests that need two processes on one file, or a process to kill.
        .executableTarget(
            name: "serialdb-test-child",
            dependencies: ["SerialDB", "SerialDBSync", "SerialDBTestSupport", "ToolArguments"],
            path: "Tests/SerialDBTestChild"),
        .testTarget(
            name: "SerialDBTests",
            dependencies: [
                "SerialDB", "SerialDBTestSupport", "CSQLite", "CSQLiteShims", "PostgresHarness", "serialdb-test-child",
                "serialdb", "serialdb-sync-server", "stress", "bench", "ToolArguments",
            ]),
        .testTarget(
            name: "SerialDBSyncTests",
            dependencies: [
                "SerialDBSync", "SerialDBSyncWire", "SerialDBSyncServer", "SerialDB", "SerialDBTestSupport",
                "PostgresHarness", "serialdb-sync-server", "serialdb", "serialdb-test-child",
            ]),
        // The protocol alone: its messages, values and rules, with nothing of the core linked in.
        .testTarget(name: "SerialDBSyncWireTests", dependencies: ["SerialDBSyncWire", "HarnessSupport"]),
        .testTarget(
            name: "SerialDBSyncServerTests",
            dependencies: [
                "SerialDBSyncServer", "SerialDBSyncWire", "SerialDB", "SerialDBTestSupport", "PostgresHarness",
                "serialdb-sync-server", "CLibCrypto",
            ],
            // The Python script that mints the JWTs of the sign-in tests with PyJWT.
            exclude: ["Scripts"]),
    ],
    swiftLanguageModes: [.v6]
)
