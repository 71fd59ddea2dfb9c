import BeaconConfigReading

/// Phones, watches and tags that advertise from resolvable private addresses (YAML section `devices`), followed
/// through their identity resolving keys (docs/configuration.md, docs/private-devices.md).
public struct PrivateDeviceSettings: Sendable, Equatable {
    /// `devices.publish_unresolved`: publish sightings of resolvable private addresses that match no key (as
    /// `device` sightings when `formats.include_devices` is on). Off by default: strangers' phones stay private.
    public var publishUnresolved: Bool
    /// `devices.address_lifetime_s`: how long a resolved address stays cached after it was last heard.
    public var addressLifetime: Double
    /// `devices.unresolved_cache`: most unresolved addresses remembered (so each costs one pass over the keys).
    public var unresolvedCache: Int
    /// `devices.known`: the devices and their keys.
    public var known: [PrivateDevice]

    public init(
        publishUnresolved: Bool = false, addressLifetime: Double = 1800, unresolvedCache: Int = 10_000,
        known: [PrivateDevice] = []
    ) {
        self.publishUnresolved = publishUnresolved
        self.addressLifetime = addressLifetime
        self.unresolvedCache = unresolvedCache
        self.known = known
    }

    /// The resolver these settings describe, with byte orders learned before (by device name) restored.
    public func resolver(learnedOrders: [String: KeyByteOrder] = [:]) -> PrivateAddressResolver {
        let usable = known.filter { $0.key != nil }
        return PrivateAddressResolver(
            keys: usable.compactMap(\.key), orders: usable.map { learnedOrders[$0.name] },
            settings: .init(lifetime: addressLifetime, negativeCapacity: unresolvedCache))
    }

    /// The devices the resolver's key indices refer to (those whose key is loaded), in the same order.
    public var resolvable: [PrivateDevice] { known.filter { $0.key != nil } }

    /// Per-device away timeouts by beacon id, for the tracker.
    public var awayTimeouts: [String: Double] {
        var out: [String: Double] = [:]
        for device in known { if let timeout = device.awayTimeout { out[device.beaconID] = timeout } }
        return out
    }

    public func validate(path: String = "devices") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if !(addressLifetime >= 60 && addressLifetime <= 86_400) {
            issues.append(
                ConfigIssue(
                    path: "\(path).address_lifetime_s",
                    message: "must be 60...86400 seconds, got \(addressLifetime)"))
        }
        if !(100...1_000_000).contains(unresolvedCache) {
            issues.append(
                ConfigIssue(path: "\(path).unresolved_cache", message: "must be 100...1000000, got \(unresolvedCache)"))
        }
        var names: [String: Int] = [:]
        var fingerprints: [String: Int] = [:]
        for (index, device) in known.enumerated() {
            let at = "\(path).known[\(index)]"
            if let first = names[device.name] {
                issues.append(
                    ConfigIssue(path: "\(at).name", message: "duplicate device name (also \(path).known[\(first)])"))
            } else if !device.name.isEmpty {
                names[device.name] = index
            }
            if let key = device.key {
                if let first = fingerprints[key.fingerprint] {
                    issues.append(
                        ConfigIssue(
                            path: "\(at).\(device.keySource.key)",
                            message: "the same key as \(path).known[\(first)]"))
                } else {
                    fingerprints[key.fingerprint] = index
                }
            }
            if let timeout = device.awayTimeout, !(timeout > 0 && timeout <= 86_400) {
                issues.append(
                    ConfigIssue(
                        path: "\(at).away_timeout_s", message: "must be > 0 and <= 86400 seconds, got \(timeout)"))
            }
        }
        return issues
    }
}

/// One device with an identity resolving key.
public struct PrivateDevice: Sendable, Equatable {
    /// Where the key comes from. Inline keys are allowed (the way Home Assistant and ESPresense users paste
    /// them), but a file or the environment keeps the secret out of the configuration file.
    public enum KeySource: Sendable, Equatable {
        /// `irk:` in the configuration file.
        case inline
        /// `irk_file:` (absolute path; content: the key in any accepted form, surrounding space ignored).
        case file(String)
        /// `irk_env:` (variable name).
        case environment(String)

        /// The configuration key this source is written with.
        public var key: String {
            switch self {
            case .inline: "irk"
            case .file: "irk_file"
            case .environment: "irk_env"
            }
        }
    }

    /// `name`: 1-64 letters, digits, `_` or `-`; the stable id is `irk:<name>`.
    public var name: String
    public var keySource: KeySource
    /// The key; nil until a file or environment source is loaded (the configuration loader does that).
    public var key: IdentityResolvingKey?
    /// `measured_power`: RSSI at 1 m in dBm (phones advertise none); nil: `distance.default_measured_power`.
    public var measuredPower: Int?
    /// `away_timeout_s`: overrides `tracking.away_timeout_s` for this device (phones go quiet for longer).
    public var awayTimeout: Double?

    public init(
        name: String, keySource: KeySource = .inline, key: IdentityResolvingKey? = nil,
        measuredPower: Int? = nil, awayTimeout: Double? = nil
    ) {
        self.name = name
        self.keySource = keySource
        self.key = key
        self.measuredPower = measuredPower
        self.awayTimeout = awayTimeout
    }

    /// The format name of resolved devices in events and region matches.
    public static let format = "irk"

    /// The beacon id events carry: `irk:<name>` (never the key).
    public var beaconID: String { "irk:" + name }
}
