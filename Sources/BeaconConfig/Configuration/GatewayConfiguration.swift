import BeaconDelivery
import BeaconEvents
import BeaconFormats
import BeaconModel
import BeaconRooms
import BeaconTracking
import DeviceProtocols

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
    public var devices: PrivateDeviceSettings
    public var mqtt: MQTTSettings
    public var topics: TopicSettings
    public var outbox: OutboxSettings
    public var esphomeAPI: ESPHomeAPISettings
    public var rooms: RoomSettings = RoomSettings()
    /// `webhook`: the HTTP sink; nil when the section is absent.
    public var webhook: WebhookSettings?
    /// `gatt`: connections to devices (MQTT commands, device information); off by default.
    public var gatt: GATTSettings = GATTSettings()
    /// `http`: the status page and `/metrics`; off by default.
    public var http: HTTPSettings = HTTPSettings()
    /// `site`: the site configuration this gateway follows (docs/site-config.md); nil when the section is absent.
    public var site: SiteSettings?

    public init(
        gateway: GatewaySettings, logging: LoggingSettings = LoggingSettings(),
        telemetry: TelemetrySettings = TelemetrySettings(), scanner: ScannerSettings = ScannerSettings(),
        formats: FormatSettings = FormatSettings(), distance: DistanceSettings = DistanceSettings(),
        tracking: TrackerSettings = TrackerSettings(), regions: [RegionRule] = [], beacons: [KnownBeacon] = [],
        devices: PrivateDeviceSettings = PrivateDeviceSettings(),
        mqtt: MQTTSettings = MQTTSettings(), topics: TopicSettings = TopicSettings(),
        outbox: OutboxSettings = OutboxSettings(), esphomeAPI: ESPHomeAPISettings = ESPHomeAPISettings()
    ) {
        self.gateway = gateway
        self.logging = logging
        self.telemetry = telemetry
        self.scanner = scanner
        self.formats = formats
        self.distance = distance
        self.tracking = tracking
        self.regions = regions
        self.beacons = beacons
        self.devices = devices
        self.mqtt = mqtt
        self.topics = topics
        self.outbox = outbox
        self.esphomeAPI = esphomeAPI
    }

    /// Every top-level section, in the order of the example file and docs/configuration.md.
    public static let sectionNames = [
        "gateway", "logging", "telemetry", "scanner", "formats", "distance", "tracking", "regions", "beacons",
        "devices", "mqtt", "topics", "outbox", "webhook", "esphome_api", "rooms", "gatt",
        "http",
        "site",
    ]

    /// The beacons Home Assistant discovery announces and events name: `beacons`, then every device of
    /// `devices.known` (as `irk:<name>`) that `beacons` does not list itself.
    public var namedBeacons: [KnownBeacon] {
        let listed = Set(beacons.map(\.id))
        return beacons
            + devices.known.filter { !$0.name.isEmpty && !listed.contains($0.beaconID) }
            .map { KnownBeacon(id: $0.beaconID, name: $0.name) }
    }
}
