/// The whole configuration file, one property per top-level section (docs/configuration.md lists every key).
public struct GatewayConfiguration: Sendable, Equatable {
    public var gateway: GatewaySettings
    public var logging: LoggingSettings
    public var telemetry: TelemetrySettings
    public var scanner: ScannerSettings
    public var formats: FormatSettings
    public var distance: DistanceSettings
    public var tracking: TrackerSettings
    public var regions: [RegionRule]
    public var beacons: [KnownBeacon]
    public var mqtt: MQTTSettings
    public var topics: TopicSettings
    public var outbox: OutboxSettings

    public init(gateway: GatewaySettings, logging: LoggingSettings = LoggingSettings(),
                telemetry: TelemetrySettings = TelemetrySettings(), scanner: ScannerSettings = ScannerSettings(),
                formats: FormatSettings = FormatSettings(), distance: DistanceSettings = DistanceSettings(),
                tracking: TrackerSettings = TrackerSettings(), regions: [RegionRule] = [], beacons: [KnownBeacon] = [],
                mqtt: MQTTSettings = MQTTSettings(), topics: TopicSettings = TopicSettings(),
                outbox: OutboxSettings = OutboxSettings()) {
        self.gateway = gateway
        self.logging = logging
        self.telemetry = telemetry
        self.scanner = scanner
        self.formats = formats
        self.distance = distance
        self.tracking = tracking
        self.regions = regions
        self.beacons = beacons
        self.mqtt = mqtt
        self.topics = topics
        self.outbox = outbox
    }

    /// Every top-level section, in the order of the example file and docs/configuration.md.
    public static let sectionNames = [
        "gateway", "logging", "telemetry", "scanner", "formats", "distance", "tracking", "regions", "beacons",
        "mqtt", "topics", "outbox",
    ]
}
