import BeaconModel

/// Which beacons a region watches. Every given part must match; an absent part (or `*`) matches anything.
///
/// Identifiers are compared by position with the observation's identifiers (layout order): `nil` or `"*"`
/// matches any value, and a pattern shorter than the beacon's identifiers leaves the rest open, so an iBeacon
/// region of UUID only, UUID+major or UUID+major+minor is `[uuid]`, `[uuid, major]`, `[uuid, major, minor]`
/// as on iOS. Hex identifiers compare case-insensitively; decimal ones by value ("07" matches "7").
public struct RegionMatch: Sendable, Equatable, Hashable {
    /// Format name (`ibeacon`, `eddystone-uid`, a layout's name, ...); nil or `*` for any.
    public var format: String?
    public var identifiers: [String?]
    /// Device address (exact).
    public var address: BluetoothAddress?
    /// Local-name pattern with `*` matching any run of characters (case-sensitive).
    public var namePattern: String?

    public init(
        format: String? = nil, identifiers: [String?] = [], address: BluetoothAddress? = nil,
        namePattern: String? = nil
    ) {
        self.format = format
        self.identifiers = identifiers
        self.address = address
        self.namePattern = namePattern
    }

    /// An iBeacon region as on iOS: UUID, UUID+major or UUID+major+minor.
    public static func iBeacon(uuid: String, major: UInt16? = nil, minor: UInt16? = nil) -> RegionMatch {
        RegionMatch(format: "ibeacon", identifiers: [uuid, major.map { String($0) }, minor.map { String($0) }])
    }

    /// An Eddystone-UID region by namespace and/or instance.
    public static func eddystone(namespace: String? = nil, instance: String? = nil) -> RegionMatch {
        RegionMatch(format: "eddystone-uid", identifiers: [namespace, instance])
    }

    public func matches(
        format beaconFormat: String, identifiers beaconIdentifiers: [String],
        address beaconAddress: BluetoothAddress, name: String?
    ) -> Bool {
        if let format, format != "*", format.lowercased() != beaconFormat.lowercased() { return false }
        if let address, address != beaconAddress { return false }
        for (index, pattern) in identifiers.enumerated() {
            guard let pattern, pattern != "*" else { continue }
            guard index < beaconIdentifiers.count,
                RegionMatch.identifier(beaconIdentifiers[index], equals: pattern)
            else { return false }
        }
        if let namePattern {
            guard let name, RegionMatch.glob(namePattern, matches: name) else { return false }
        }
        return true
    }

    package static func identifier(_ value: String, equals pattern: String) -> Bool {
        if value == pattern { return true }
        if let a = UInt64(value), let b = UInt64(pattern) { return a == b }
        return normalized(value) == normalized(pattern)
    }

    /// Lower case without a leading `0x`: the form hex identifiers are compared in.
    static func normalized(_ text: String) -> String {
        let lower = text.lowercased()
        return lower.hasPrefix("0x") ? String(lower.dropFirst(2)) : lower
    }

    /// `*` matches any run of characters (also empty); everything else literally.
    public static func glob(_ pattern: String, matches text: String) -> Bool {
        let p = Array(pattern.unicodeScalars)
        let t = Array(text.unicodeScalars)
        var pi = 0
        var ti = 0
        var starP = -1
        var starT = 0
        while ti < t.count {
            if pi < p.count, p[pi] != "*", p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == "*" {
                starP = pi
                starT = ti
                pi += 1
            } else if starP >= 0 {
                pi = starP + 1
                starT += 1
                ti = starT
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
