import BeaconModel

/// A beacon recognised in one advertising report: its format, canonical id, identifiers and data.
public struct Beacon: Sendable, Equatable {
    /// Format name (`ibeacon`, `eddystone-tlm`, a user layout's name, ...).
    public var format: String
    /// Canonical id (docs/beacon-ids.md), e.g. `ibeacon:<uuid>:<major>:<minor>`.
    public var beaconID: String
    /// Identifiers rendered by the layout rules: 2 bytes decimal, 16 bytes dashed UUID, else 0x-hex.
    public var identifiers: [String]
    /// Measured power at 1 m in dBm, as transmitted (with the layout's correction) or the layout's default.
    public var measuredPower: Int?
    /// Data fields and telemetry (snake_case names, see docs/decoding.md).
    public var fields: [String: FieldValue]
    /// True for frames that carry no identity of their own (Eddystone TLM, URL; layouts with `x`): their id
    /// is built from the device address.
    public var isExtraFrame: Bool

    public init(
        format: String, beaconID: String, identifiers: [String], measuredPower: Int?,
        fields: [String: FieldValue] = [:], isExtraFrame: Bool = false
    ) {
        self.format = format
        self.beaconID = beaconID
        self.identifiers = identifiers
        self.measuredPower = measuredPower
        self.fields = fields
        self.isExtraFrame = isExtraFrame
    }

    /// `<format>:<id1>:<id2>...` with the `0x` prefix of hex identifiers dropped.
    static func canonicalID(format: String, identifiers: [String]) -> String {
        var total = format.utf8.count
        for identifier in identifiers { total += 1 + identifier.utf8.count }
        var out = ""
        out.reserveCapacity(total)
        out += format
        for identifier in identifiers {
            out += ":"
            if isHex(identifier) { out += identifier.dropFirst(2) } else { out += identifier }
        }
        return out
    }

    @inline(__always)
    package static func isHex(_ identifier: String) -> Bool {
        var bytes = identifier.utf8.makeIterator()
        return bytes.next() == 0x30 && bytes.next() == 0x78
    }

    /// `<format>:<AA:BB:CC:DD:EE:FF>` for frames identified by the sending device, in one allocation.
    static func addressID(format: String, address: BluetoothAddress) -> String {
        var format = format
        return format.withUTF8 { name in
            String(unsafeUninitializedCapacity: name.count + 18) { out in
                var position = 0
                for byte in name where position < out.count {
                    out[position] = byte
                    position += 1
                }
                guard position + 18 <= out.count else { return position }
                out[position] = UInt8(ascii: ":")
                return HexText.writeAddress(address, to: out, at: position + 1)
            }
        }
    }
}
