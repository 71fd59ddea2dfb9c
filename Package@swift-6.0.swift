// swift-tools-version: 6.0
// The manifest for Swift 6.0 (Debian 13 trixie's swiftlang 6.0.3, the Swift Raspberry Pi OS users get from apt;
// the cross build in scripts/cross-build.sh uses it). Newer toolchains read Package.swift instead: keep the two alike
// (scripts/cross-build.sh checks that they differ only in these first lines).
import PackageDescription

// BeaconBridge: BLE beacon to MQTT gateway.
// Layout (see docs/architecture.md): a pure core (BeaconCore, no C imports, no I/O, no clock reads),
// thin adapters that are the only places importing C, and a short executable that wires them.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "BeaconBridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "beaconbridge", targets: ["beaconbridge"])
    ],
    targets: [
        // C libraries from Debian, wrapped as system library targets.
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // glibc calls Swift's Glibc module does not show (pipe2, accept4, posix_spawn's closefrom).
        .systemLibrary(name: "CLinux"),

        // The pure core.
        .target(name: "BeaconCore", swiftSettings: strict),
        // The laboratory of `beaconbridge simulate`: the simulators, radio models, baselines, oracles, frontiers,
        // scores and scenario files; on top of the core, never in it (the daemon does not link it).
        .target(name: "BeaconSimulation", dependencies: ["BeaconCore"], swiftSettings: strict),

        // The runtime shared by the adapters and the commands: mailboxes between threads and tasks, the one
        // thread spawner.
        .target(name: "BeaconRuntime", dependencies: ["BeaconCore", "CLinux"], swiftSettings: strict),

        // Adapters: the only modules that import C.
        .target(name: "HCIScanner", dependencies: ["BeaconCore", "BeaconRuntime", "CBlueZ"], swiftSettings: strict),
        .target(
            name: "MQTTPublisher", dependencies: ["BeaconCore", "BeaconRuntime", "CMosquitto", "CLinux"],
            swiftSettings: strict),
        .target(name: "SQLiteStore", dependencies: ["BeaconCore", "BeaconRuntime", "CSQLite"], swiftSettings: strict),
        // The webhook sink (docs/webhook.md): POSTs events through libcurl (TLS through the system's OpenSSL),
        // loaded with dlopen only when a webhook is configured (Sources/CCurl; the build needs
        // libcurl4-openssl-dev for the header alone).
        .target(name: "CCurl"),
        .target(name: "WebhookSink", dependencies: ["BeaconCore", "BeaconRuntime", "CCurl"], swiftSettings: strict),
        .target(name: "YAMLConfig", dependencies: ["BeaconCore", "CYAML"], swiftSettings: strict),
        // GATT connections (docs/gatt.md): the core's GATTClient over an LE L2CAP socket on the ATT channel,
        // connection slots.
        .target(
            name: "GATTLink", dependencies: ["BeaconCore", "BeaconRuntime", "HCIScanner", "CBlueZ"],
            swiftSettings: strict),
        // The ESPHome native API server (Bluetooth proxy for Home Assistant); Noise crypto from libcrypto.
        .target(
            name: "ESPHomeProxy", dependencies: ["BeaconCore", "BeaconRuntime", "CCrypto", "CLinux", "GATTLink"],
            swiftSettings: strict),

        // Command implementations (wiring), kept out of main.swift so tests and the bench can reuse them.
        .target(
            name: "BeaconBridgeCLI",
            dependencies: [
                "BeaconCore", "BeaconRuntime", "HCIScanner", "MQTTPublisher", "SQLiteStore", "YAMLConfig",
                "ESPHomeProxy", "BeaconSimulation", "WebhookSink", "GATTLink",
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "beaconbridge", dependencies: ["BeaconBridgeCLI"], swiftSettings: strict),
        .executableTarget(
            name: "beaconbridge-bench",
            dependencies: [
                "BeaconCore", "BeaconBridgeCLI", "BeaconRuntime", "MQTTPublisher", "SQLiteStore", "TestSupport",
                "ESPHomeProxy", "BeaconSimulation",
            ],
            swiftSettings: strict
        ),

        // Test-only: the GATT peripheral of the QEMU stage's `gatt` scenario (docs/gatt.md), never packaged.
        .executableTarget(
            name: "beaconbridge-testpeer",
            dependencies: ["BeaconCore", "BeaconRuntime", "GATTLink", "HCIScanner", "GATTTestPeer"],
            swiftSettings: strict),
        // The test peripheral's GATT database and ATT server (pure), shared with GATTLinkTests.
        .target(name: "GATTTestPeer", dependencies: ["BeaconCore"], path: "Tests/GATTTestPeer", swiftSettings: strict),

        // Shared by the integration tests: a real mosquitto on a free loopback port, a subscriber, the built binary.
        .target(
            name: "TestSupport", dependencies: ["BeaconCore", "BeaconRuntime", "MQTTPublisher"],
            path: "Tests/TestSupport",
            swiftSettings: strict),

        // BeaconSimulation only for two fixtures: SimulationDistance (EngineFixtures) and SimulationRandom (FilterTests).
        .testTarget(
            name: "BeaconCoreTests", dependencies: ["BeaconCore", "BeaconSimulation", "TestSupport", "GATTTestPeer"],
            swiftSettings: strict),
        .testTarget(
            name: "BeaconSimulationTests", dependencies: ["BeaconSimulation", "BeaconCore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "BeaconRuntimeTests", dependencies: ["BeaconRuntime", "BeaconCore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "HCIScannerTests", dependencies: ["HCIScanner", "BeaconCore", "BeaconRuntime"], swiftSettings: strict),
        .testTarget(
            name: "MQTTPublisherTests",
            dependencies: ["MQTTPublisher", "SQLiteStore", "BeaconCore", "BeaconRuntime", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "SQLiteStoreTests", dependencies: ["SQLiteStore", "BeaconCore", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "GATTLinkTests", dependencies: ["GATTLink", "GATTTestPeer", "BeaconCore", "BeaconRuntime"],
            swiftSettings: strict),
        .testTarget(name: "YAMLConfigTests", dependencies: ["YAMLConfig", "BeaconCore"], swiftSettings: strict),
        .testTarget(
            name: "ESPHomeProxyTests",
            dependencies: ["ESPHomeProxy", "BeaconCore", "BeaconRuntime", "GATTLink", "GATTTestPeer", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "BeaconBridgeCLI", "BeaconCore", "BeaconRuntime", "SQLiteStore", "TestSupport", "GATTTestPeer",
            ],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
