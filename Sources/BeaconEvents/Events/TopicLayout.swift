import BeaconModel

/// Every topic the gateway publishes to or subscribes, in one place (documented in docs/mqtt.md).
///
/// With the default prefix and gateway `gw1`:
/// - `beaconbridge/gw1/availability`            `online` / `offline` (retained, `offline` is the will)
/// - `beaconbridge/gw1/sighting/<beacon_id>`    sighting events
/// - `beaconbridge/gw1/presence/<beacon_id>`    presence events (seen / away)
/// - `beaconbridge/gw1/region/<region>/<beacon_id>`  region events (enter / exit / state)
/// - `beaconbridge/gw1/telemetry`               gateway status and counters
/// - `espresense/devices/<esp_id>/<room>`, `espresense/rooms/<room>/status` in ESPresense mode
/// - `homeassistant/<component>/<node>/<object>/config` and `homeassistant/status` with discovery on
public struct TopicLayout: Sendable, Equatable {
    public var settings: TopicSettings { didSet { base = Self.base(settings, gatewayID) } }
    public var gatewayID: String { didSet { base = Self.base(settings, gatewayID) } }
    /// `<prefix>/<gateway_id>`, kept with the two it is made of (every event's topic starts with it).
    public private(set) var base: String

    public init(settings: TopicSettings, gatewayID: String) {
        self.settings = settings
        self.gatewayID = gatewayID
        self.base = Self.base(settings, gatewayID)
    }

    private static func base(_ settings: TopicSettings, _ gatewayID: String) -> String {
        settings.prefix + "/" + TopicLevel.safe(gatewayID)
    }

    public var availability: String { base + "/availability" }
    public var telemetry: String { base + "/telemetry" }
    /// GATT commands arrive on `<base>/command/gatt/<op>` (docs/gatt.md): this is `<base>/command/gatt`.
    public var gattCommandBase: String { base + "/command/gatt" }
    /// The reply to a GATT command: `<base>/reply/gatt/<op>`.
    public func gattReply(_ level: String) -> String { base + "/reply/gatt/" + TopicLevel.safe(level) }
    /// A configured device's information (`gatt.devices`): `<base>/device/<name>/info`, retained.
    public func deviceInfo(_ name: String) -> String { base + "/device/" + TopicLevel.safe(name) + "/info" }
    /// A configured device's Home Assistant update entity state (`gatt.devices[].firmware`): `<base>/device/<name>/update`.
    public func deviceUpdate(_ name: String) -> String { base + "/device/" + TopicLevel.safe(name) + "/update" }
    /// The update entity's install command: `<base>/command/update/<name>` (payload `install`), one topic per device
    /// so a broker ACL can allow installs on some devices only.
    public var updateCommandBase: String { base + "/command/update" }
    /// Rooms commands (training, issue 29) arrive on `<base>/command/rooms/<verb>` (`train`, `forget`), one topic
    /// per verb so a broker ACL can allow one of them only: this is `<base>/command/rooms`.
    public var roomsCommandBase: String { base + "/command/rooms" }
    /// The reply to a rooms command: `<base>/reply/rooms/<verb>`.
    public func roomsReply(_ verb: String) -> String { base + "/reply/rooms/" + TopicLevel.safe(verb) }
    /// Progress of a running `dfu` command: `<base>/reply/gatt/dfu/progress` (QoS 0, not retained).
    public var dfuProgress: String { base + "/reply/gatt/dfu/progress" }
    public func sighting(beaconID: String) -> String { joined("/sighting/", TopicLevel.safe(beaconID)) }
    public func presence(beaconID: String) -> String { joined("/presence/", TopicLevel.safe(beaconID)) }
    public func region(_ region: String, beaconID: String) -> String {
        joined("/region/", TopicLevel.safe(region), "/", TopicLevel.safe(beaconID))
    }

    /// `base` followed by the other parts, copied into one new string (a chain of `+` makes one string per step).
    private func joined(_ first: String, _ second: String, _ third: String = "", _ fourth: String = "") -> String {
        let total = base.utf8.count + first.utf8.count + second.utf8.count + third.utf8.count + fourth.utf8.count
        return String(unsafeUninitializedCapacity: total) { out in
            var position = 0
            func copy(_ part: String) {
                let copied = part.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                    guard let source = bytes.baseAddress, let target = out.baseAddress,
                        position + bytes.count <= out.count
                    else { return false }
                    (target + position).update(from: source, count: bytes.count)
                    position += bytes.count
                    return true
                }
                guard copied != true else { return }
                for byte in part.utf8 where position < out.count {  // a bridged or small string
                    out[position] = byte
                    position += 1
                }
            }
            copy(base)
            copy(first)
            copy(second)
            copy(third)
            copy(fourth)
            return position
        }
    }

    /// `<espresense prefix>/devices/<id>/<room>`; nil unless ESPresense mode has a room.
    public func espresenseDevice(id: String) -> String? {
        guard let room = settings.espresense.room else { return nil }
        return settings.espresense.prefix + "/devices/" + TopicLevel.safe(id) + "/" + TopicLevel.safe(room)
    }

    /// `<espresense prefix>/rooms/<room>/status`; nil unless ESPresense mode has a room.
    public var espresenseRoomStatus: String? {
        guard let room = settings.espresense.room else { return nil }
        return settings.espresense.prefix + "/rooms/" + TopicLevel.safe(room) + "/status"
    }

    /// Home Assistant's birth / last-will topic: `<discovery_prefix>/status`.
    public var homeAssistantStatus: String { settings.homeAssistant.discoveryPrefix + "/status" }

    /// `<discovery_prefix>/<component>/<node_id>/<object_id>/config`.
    public func discoveryConfig(component: String, objectID: String) -> String {
        settings.homeAssistant.discoveryPrefix + "/" + component + "/" + discoveryNodeID + "/" + objectID + "/config"
    }

    /// The discovery node id: `beaconbridge_<gateway_id>` reduced to `[a-z0-9_]`.
    public var discoveryNodeID: String { "beaconbridge_" + TopicLayout.slug(gatewayID) }

    /// Lower-case `[a-z0-9_]` form of `text` for Home Assistant ids (runs of other characters become one `_`).
    public static func slug(_ text: String) -> String {
        var out = ""
        var lastWasUnderscore = false
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let isAlnum =
                (0x30...0x39).contains(value) || (0x61...0x7A).contains(value) || (0x41...0x5A).contains(value)
            if isAlnum {
                out.unicodeScalars.append(Unicode.Scalar(UInt8(value >= 0x41 && value <= 0x5A ? value + 0x20 : value)))
                lastWasUnderscore = false
            } else if !lastWasUnderscore {
                out += "_"
                lastWasUnderscore = true
            }
        }
        return out.isEmpty ? "_" : out
    }

    /// Why `topic` is not a valid topic to publish under, or nil. `allowLevels` permits `/` inside.
    public static func problem(inTopic topic: String, allowLevels: Bool) -> String? {
        if topic.isEmpty { return "must not be empty" }
        if topic.utf8.count > 1024 { return "must be at most 1024 bytes" }
        for scalar in topic.unicodeScalars {
            switch scalar {
            case "+", "#": return "must not contain MQTT wildcards (+ or #)"
            case "\u{0}": return "must not contain NUL"
            case "/" where !allowLevels: return "must be a single topic level (no /)"
            default: continue
            }
        }
        if allowLevels && (topic.hasPrefix("/") || topic.hasSuffix("/")) { return "must not start or end with /" }
        return MQTTString.problem(topic)
    }
}
