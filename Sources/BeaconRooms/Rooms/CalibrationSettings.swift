import BeaconConfigReading

/// `rooms.calibration`: self-calibration in the gateway (docs/rooms.md, "Self-calibration"). On by default
/// wherever `rooms.enabled` is: every gateway advertises an identity beacon beside its scan, every gateway feeds
/// what it hears of the others' identity beacons into `GatewayCalibration`, and the solved receive offsets
/// correct the levels the arbiter compares.
///
/// The identity beacon is an iBeacon with the site's `uuid` and a major/minor naming the gateway (the 32-bit
/// FNV-1a hash of its id, split in two): every gateway decodes its peers with the existing iBeacon decoder, and a
/// gateway recognises a peer's identity from `rooms.gateways` alone, with no number to type per gateway.
public struct CalibrationSettings: Sendable, Equatable {
    /// How solved offsets and the hand-typed `rooms.receiver_offsets_db` combine.
    public enum HandOffsets: String, Sendable, Equatable, CaseIterable {
        /// A hand-typed offset wins for its gateway (an override); solved offsets serve the other gateways.
        case override
        /// Solved offsets replace the hand-typed ones wherever the gateway is in a pair; a hand value serves only
        /// until then (a prior for the first minutes, or for a gateway nobody hears).
        case fallback
    }

    /// `rooms.calibration.enabled` (with `rooms.enabled`): solve and use the offsets.
    public var enabled = true
    /// `rooms.calibration.advertise`: this gateway sends its identity beacon (live HCI scanning only).
    public var advertise = true
    /// `rooms.calibration.interval_ms`: the identity beacon's advertising interval (BLE: 20-10240 ms).
    public var intervalMilliseconds: Double = 1000
    /// `rooms.calibration.tx_power_dbm`: the power asked of the controller (the extended commands carry it; the
    /// controller's answer is logged; legacy advertising cannot set it, only read it).
    public var txPower: Int = 0
    /// `rooms.calibration.uuid`: the site's identity UUID (every gateway of a site uses the same).
    public var uuid = CalibrationSettings.defaultUUID
    /// `rooms.calibration.window_s`: seconds of samples whose median is a link's level.
    public var window: Double = 300
    /// `rooms.calibration.solve_interval_s`: how often the offsets are solved again (capture time).
    public var solveInterval: Double = 10
    /// `rooms.calibration.hand_offsets`.
    public var handOffsets: HandOffsets = .override

    public static let defaultUUID = "bb0ca11b-0029-4c0d-9e00-6a7e3a1d0000"
    public static let intervalRange: ClosedRange<Double> = 20...10_240
    public static let txPowerRange: ClosedRange<Int> = -127...20
    public static let windowRange: ClosedRange<Double> = 30...3600
    public static let solveIntervalRange: ClosedRange<Double> = 1...600
    /// The iBeacon's measured power at 1 m (dBm) the identity beacon carries; the solver does not use it.
    public static let measuredPower: Int8 = -59

    public init() {}

    /// The identity beacon's major and minor for a gateway id: FNV-1a (32 bit) of its UTF-8, high and low half.
    public static func identity(of gatewayID: String) -> (major: UInt16, minor: UInt16) {
        var hash: UInt32 = 0x811C_9DC5
        for byte in gatewayID.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return (UInt16(hash >> 16), UInt16(hash & 0xFFFF))
    }

    /// The beacon id (docs/beacon-ids.md) of a gateway's identity beacon.
    public func beaconID(of gatewayID: String) -> String {
        let (major, minor) = Self.identity(of: gatewayID)
        return "ibeacon:\(uuid):\(major):\(minor)"
    }

    /// Beacon id -> gateway id for every gateway of the site.
    public func identities(of gateways: some Sequence<String>) -> [String: String] {
        var map: [String: String] = [:]
        // A collision (reported by `validate`) keeps the lower id, the same on every gateway.
        for gateway in gateways {
            let id = beaconID(of: gateway)
            map[id] = min(map[id] ?? gateway, gateway)
        }
        return map
    }

    /// The solver's settings.
    public var solverSettings: GatewayCalibration.Settings {
        var settings = GatewayCalibration.Settings()
        settings.window = window
        return settings
    }

    /// Problems with these settings for a site of `gateways`.
    public func validate(gateways: some Collection<String>) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        let path = "rooms.calibration"
        if !(intervalMilliseconds.isFinite && Self.intervalRange.contains(intervalMilliseconds)) {
            issues.append(
                ConfigIssue(
                    path: path + ".interval_ms",
                    message: "must be 20...10240 ms (the BLE advertising interval), got \(intervalMilliseconds)"))
        }
        if !Self.txPowerRange.contains(txPower) {
            issues.append(ConfigIssue(path: path + ".tx_power_dbm", message: "must be -127...20 dBm, got \(txPower)"))
        }
        if !(window.isFinite && Self.windowRange.contains(window)) {
            issues.append(ConfigIssue(path: path + ".window_s", message: "must be 30...3600 seconds, got \(window)"))
        }
        if !(solveInterval.isFinite && Self.solveIntervalRange.contains(solveInterval)) {
            issues.append(
                ConfigIssue(path: path + ".solve_interval_s", message: "must be 1...600 seconds, got \(solveInterval)"))
        }
        var seen: [String: String] = [:]
        for gateway in gateways.sorted() {
            let id = beaconID(of: gateway)
            if let other = seen[id] {
                issues.append(
                    ConfigIssue(
                        path: "rooms.gateways.\(gateway)",
                        message:
                            "`\(gateway)` and `\(other)` have the same identity beacon (\(id)): rename one of them"))
            }
            seen[id] = gateway
        }
        return issues
    }
}

extension CalibrationSettings {
    /// The `rooms.calibration:` section. Ranges are `validate(gateways:)`'s.
    public init(from r: inout ConfigReader) {
        self.init()
        enabled = r.bool("enabled", default: enabled)
        advertise = r.bool("advertise", default: advertise)
        intervalMilliseconds = r.value("interval_ms", default: intervalMilliseconds)
        txPower = r.value("tx_power_dbm", default: txPower)
        uuid = r.uuid("uuid") ?? uuid
        window = r.duration("window_s", default: window)
        solveInterval = r.duration("solve_interval_s", default: solveInterval)
        handOffsets = r.choice("hand_offsets", default: handOffsets)
    }
}
