// swift-tools-version: 6.0
import PackageDescription

// BeaconBridge: BLE beacon to MQTT gateway.
// Layout (see docs/architecture.md): a pure core in targets by responsibility (no C imports but zlib's, no I/O, no
// clock reads; the graph below is the only one the compiler allows), thin adapters that are the only places importing
// C, and a short executable that wires them. One manifest for both toolchains: Swift 6.3 here and Debian trixie's
// swiftlang 6.0.3 for the Raspberry Pi package (scripts/cross-build.sh); nothing in it needs 6.1.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]
// The core's unit tests (Tests/BeaconCoreTests, by folder) see every core target.
let wholeCore: [Target.Dependency] = [
    "BeaconModel", "BeaconConfigReading", "BeaconFormats", "BeaconTracking", "BeaconRooms", "DeviceProtocols",
    "SecureDFU",
    "BeaconEvents", "BeaconDelivery", "BeaconConfig",
]

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
        // zlib: raw DEFLATE and CRC-32 for Secure DFU packages (SecureDFU, the one C import of the core).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // glibc calls Swift's Glibc module does not show (pipe2, accept4, posix_spawn's closefrom).
        .systemLibrary(name: "CLinux"),

        // The pure core, bottom to top (docs/architecture.md, "The core's targets").
        // Model and wire values: addresses, reports, observations, engine events, JSON, btsnoop records, byte cursors.
        .target(name: "BeaconModel", swiftSettings: strict),
        // Reading configuration trees: paths, scalars, durations, sizes, issues with their source marks.
        .target(name: "BeaconConfigReading", dependencies: ["BeaconModel"], swiftSettings: strict),
        // HCI events, advertising data, every beacon and sensor format, layouts, AES, private addresses, scanning's
        // commands and supervisor; the formats', devices' and scanner's settings.
        .target(name: "BeaconFormats", dependencies: ["BeaconModel", "BeaconConfigReading"], swiftSettings: strict),
        // RSSI filters, tracking, distance, regions and presence, the gateway pipeline (HCI bytes to engine events).
        .target(
            name: "BeaconTracking", dependencies: ["BeaconModel", "BeaconConfigReading", "BeaconFormats"],
            swiftSettings: strict),
        // Rooms: arbiter, classifier, coordinator, self-calibration, training, their messages and settings.
        .target(name: "BeaconRooms", dependencies: ["BeaconModel", "BeaconConfigReading"], swiftSettings: strict),
        // Device protocols: ATT/GATT (codec, client machine, commands) and the ESPHome native API (codec, Noise
        // handshake, session, device connections); their settings.
        .target(name: "DeviceProtocols", dependencies: ["BeaconModel", "BeaconConfigReading"], swiftSettings: strict),
        // Nordic Secure DFU: the package (zip through zlib, bounded), init command, the transfer machine.
        .target(name: "SecureDFU", dependencies: ["BeaconModel", "DeviceProtocols", "CZlib"], swiftSettings: strict),
        // Events and their JSON, topics, Home Assistant discovery, ESPresense mapping, devices status.
        .target(
            name: "BeaconEvents",
            dependencies: [
                "BeaconModel", "BeaconConfigReading", "BeaconFormats", "BeaconTracking", "BeaconRooms",
                "DeviceProtocols",
            ],
            swiftSettings: strict),
        // Delivery: the machine, the outbox seam, sinks and their cursors; MQTT, outbox and webhook settings.
        .target(
            name: "BeaconDelivery", dependencies: ["BeaconModel", "BeaconConfigReading", "BeaconEvents"],
            swiftSettings: strict),
        // The whole configuration (GatewayConfiguration) and its reading: the one target that sees every section.
        .target(
            name: "BeaconConfig",
            dependencies: [
                "BeaconModel", "BeaconConfigReading", "BeaconFormats", "BeaconTracking", "BeaconRooms",
                "DeviceProtocols",
                "BeaconEvents", "BeaconDelivery",
            ],
            swiftSettings: strict),
        // The laboratory of `beaconbridge simulate`: the simulators, radio models, baselines, oracles, frontiers,
        // scores and scenario files; on top of the core, never in it (the daemon does not link it).
        .target(
            name: "BeaconSimulation",
            dependencies: ["BeaconModel", "BeaconConfigReading", "BeaconFormats", "BeaconTracking", "BeaconRooms"],
            swiftSettings: strict),

        // The runtime shared by the adapters and the commands: mailboxes between threads and tasks, the one
        // thread spawner.
        .target(
            name: "BeaconRuntime", dependencies: ["BeaconModel", "BeaconFormats", "BeaconDelivery", "CLinux"],
            swiftSettings: strict),

        // Adapters: the only modules that import C.
        .target(
            name: "HCIScanner", dependencies: ["BeaconModel", "BeaconFormats", "BeaconRuntime", "CBlueZ"],
            swiftSettings: strict),
        .target(
            name: "MQTTPublisher",
            dependencies: ["BeaconModel", "BeaconEvents", "BeaconDelivery", "BeaconRuntime", "CMosquitto", "CLinux"],
            swiftSettings: strict),
        .target(
            name: "SQLiteStore",
            dependencies: [
                "BeaconModel", "BeaconFormats", "BeaconTracking", "BeaconEvents", "BeaconDelivery", "BeaconRuntime",
                "CSQLite",
            ], swiftSettings: strict),
        // The webhook sink (docs/webhook.md): POSTs events through libcurl (TLS through the system's OpenSSL),
        // loaded with dlopen only when a webhook is configured (Sources/CCurl; the build needs
        // libcurl4-openssl-dev for the header alone).
        .target(name: "CCurl"),
        .target(
            name: "WebhookSink", dependencies: ["BeaconModel", "BeaconDelivery", "BeaconRuntime", "CCurl"],
            swiftSettings: strict),
        .target(
            name: "YAMLConfig",
            dependencies: [
                "BeaconModel", "BeaconConfigReading", "BeaconFormats", "DeviceProtocols", "BeaconConfig", "CYAML",
            ], swiftSettings: strict),
        // Site configuration (docs/site-config.md): the signed envelope, its checks in order, the shared part merged
        // with a gateway's own file; HMAC-SHA256 and SHA-256 from libcrypto (CCrypto).
        .target(
            name: "SiteConfig",
            dependencies: ["BeaconModel", "BeaconConfigReading", "BeaconConfig", "YAMLConfig", "CCrypto"],
            swiftSettings: strict),
        // GATT connections (docs/gatt.md): the core's GATTClient over an LE L2CAP socket on the ATT channel,
        // connection slots.
        .target(
            name: "GATTLink",
            dependencies: [
                "BeaconModel", "BeaconFormats", "DeviceProtocols", "SecureDFU", "BeaconRuntime", "HCIScanner", "CBlueZ",
            ],
            swiftSettings: strict),
        // The ESPHome native API server (Bluetooth proxy for Home Assistant); Noise crypto from libcrypto.
        .target(
            name: "ESPHomeProxy",
            dependencies: [
                "BeaconModel", "BeaconFormats", "DeviceProtocols", "BeaconRuntime", "CCrypto", "CLinux", "GATTLink",
            ],
            swiftSettings: strict),

        // The status page's and /metrics' HTTP server (docs/status-page.md; docs/architecture.md, "The status page's
        // HTTP server"): a request parser within fixed limits, the tokens' check, the exposition format, and a poll
        // loop on a thread of its own. Nothing but the runtime's thread spawner and glibc.
        .target(name: "StatusServer", dependencies: ["BeaconRuntime", "CLinux"], swiftSettings: strict),

        // Command implementations (wiring), kept out of main.swift so tests and the bench can reuse them.
        .target(
            name: "BeaconBridgeCLI",
            dependencies: [
                "BeaconModel", "BeaconConfigReading", "BeaconFormats", "BeaconTracking", "BeaconRooms",
                "DeviceProtocols",
                "SecureDFU", "BeaconEvents", "BeaconDelivery", "BeaconConfig",
                "BeaconRuntime", "HCIScanner", "MQTTPublisher", "SQLiteStore", "YAMLConfig",
                "ESPHomeProxy", "BeaconSimulation", "WebhookSink", "GATTLink", "StatusServer", "SiteConfig",
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "beaconbridge", dependencies: ["BeaconBridgeCLI"], swiftSettings: strict),
        .executableTarget(
            name: "beaconbridge-bench",
            dependencies: [
                "BeaconModel", "BeaconFormats", "BeaconTracking", "DeviceProtocols", "BeaconEvents", "BeaconDelivery",
                "BeaconBridgeCLI", "BeaconRuntime", "MQTTPublisher", "SQLiteStore", "TestSupport",
                "ESPHomeProxy", "BeaconSimulation",
            ],
            swiftSettings: strict
        ),

        // Test-only: the GATT peripheral of the QEMU stage's `gatt` scenario (docs/gatt.md), never packaged.
        .executableTarget(
            name: "beaconbridge-testpeer",
            dependencies: ["BeaconFormats", "SecureDFU", "BeaconRuntime", "GATTLink", "HCIScanner", "GATTTestPeer"],
            swiftSettings: strict),
        // The test peripheral's GATT database and ATT server (pure), shared with GATTLinkTests.
        .target(
            name: "GATTTestPeer", dependencies: ["DeviceProtocols", "SecureDFU"], path: "Tests/GATTTestPeer",
            swiftSettings: strict),

        // Shared by the integration tests: a real mosquitto on a free loopback port, a subscriber, the built binary.
        .target(
            name: "TestSupport",
            dependencies: ["BeaconModel", "BeaconDelivery", "DeviceProtocols", "BeaconRuntime", "MQTTPublisher"],
            path: "Tests/TestSupport",
            swiftSettings: strict),

        // BeaconSimulation only for two fixtures: SimulationDistance (EngineFixtures) and SimulationRandom (FilterTests).
        .testTarget(
            name: "BeaconCoreTests", dependencies: wholeCore + ["BeaconSimulation", "TestSupport", "GATTTestPeer"],
            swiftSettings: strict),
        .testTarget(
            name: "BeaconSimulationTests",
            dependencies: [
                "BeaconSimulation", "BeaconModel", "BeaconConfigReading", "BeaconRooms", "BeaconTracking",
                "TestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BeaconRuntimeTests", dependencies: ["BeaconRuntime", "BeaconFormats", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "HCIScannerTests",
            dependencies: [
                "HCIScanner", "BeaconModel", "BeaconFormats", "BeaconRooms", "BeaconTracking", "BeaconRuntime",
            ], swiftSettings: strict),
        .testTarget(
            name: "MQTTPublisherTests",
            dependencies: [
                "MQTTPublisher", "SQLiteStore", "BeaconModel", "BeaconFormats", "BeaconRooms", "BeaconEvents",
                "BeaconTracking", "BeaconDelivery", "BeaconRuntime", "TestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore", "BeaconTracking", "BeaconEvents", "BeaconDelivery", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "GATTLinkTests",
            dependencies: ["GATTLink", "GATTTestPeer", "BeaconModel", "DeviceProtocols", "SecureDFU", "BeaconRuntime"],
            swiftSettings: strict),
        .testTarget(
            name: "YAMLConfigTests", dependencies: wholeCore + ["YAMLConfig", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "SiteConfigTests", dependencies: wholeCore + ["SiteConfig", "YAMLConfig"], swiftSettings: strict),
        .testTarget(
            name: "ESPHomeProxyTests",
            dependencies: [
                "ESPHomeProxy", "BeaconModel", "BeaconFormats", "DeviceProtocols", "BeaconRuntime", "GATTLink",
                "GATTTestPeer", "TestSupport",
            ],
            swiftSettings: strict),
        .testTarget(name: "StatusServerTests", dependencies: ["StatusServer"], swiftSettings: strict),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "BeaconBridgeCLI", "BeaconModel", "BeaconConfigReading", "BeaconFormats", "BeaconTracking",
                "BeaconRooms", "DeviceProtocols", "BeaconEvents", "BeaconDelivery", "BeaconConfig", "BeaconRuntime",
                "SQLiteStore", "TestSupport", "GATTTestPeer", "SiteConfig",
            ],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
