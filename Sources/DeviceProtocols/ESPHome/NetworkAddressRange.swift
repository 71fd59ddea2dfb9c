import BeaconModel

/// An IPv4 or IPv6 network in CIDR notation (`192.168.1.0/24`, `fd00::/8`, or a single address), for the
/// ESPHome API server's allow-list. IPv4-mapped IPv6 client addresses (`::ffff:a.b.c.d`) match IPv4 ranges.
public struct NetworkAddressRange: Sendable, Equatable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 bytes (IPv6), host bits cleared.
    public let network: [UInt8]
    public let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = NetworkAddressRange.parseAddress(String(parts[0])) else { return nil }
        let bits = address.count * 8
        var length = bits
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...bits).contains(value), parts[1].allSatisfy(\.isNumber) else {
                return nil
            }
            length = value
        }
        network = NetworkAddressRange.mask(address, length)
        prefixLength = length
    }

    public func contains(_ address: [UInt8]) -> Bool {
        var candidate = address
        if candidate.count == 16, network.count == 4, candidate[0..<10].allSatisfy({ $0 == 0 }),
            candidate[10] == 0xFF, candidate[11] == 0xFF
        {
            candidate = Array(candidate[12...])
        }
        guard candidate.count == network.count else { return false }
        return NetworkAddressRange.mask(candidate, prefixLength) == network
    }

    public var description: String { "\(NetworkAddressRange.format(network))/\(prefixLength)" }

    /// Dotted IPv4, or IPv6 as eight hexadecimal groups (IPv4-mapped addresses as `::ffff:a.b.c.d`).
    public static func format(_ address: [UInt8]) -> String {
        if address.count == 4 { return address.map(String.init).joined(separator: ".") }
        guard address.count == 16 else { return "?" }
        if address[0..<10].allSatisfy({ $0 == 0 }), address[10] == 0xFF, address[11] == 0xFF {
            return "::ffff:" + address[12...].map(String.init).joined(separator: ".")
        }
        return stride(from: 0, to: 16, by: 2).map {
            String(UInt16(address[$0]) << 8 | UInt16(address[$0 + 1]), radix: 16)
        }
        .joined(separator: ":")
    }

    private static func mask(_ address: [UInt8], _ length: Int) -> [UInt8] {
        address.enumerated().map { index, byte in
            let keep = min(8, max(0, length - index * 8))
            return keep == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - keep))
        }
    }

    /// Dotted IPv4 or IPv6 (with `::` and an optional trailing dotted IPv4) to bytes.
    public static func parseAddress(_ text: String) -> [UInt8]? {
        if !text.includes(":") { return parseIPv4(Substring(text)) }
        var halves = [text]
        if let gap = text.range(ofText: "::") {
            halves = [String(text[..<gap.lowerBound]), String(text[gap.upperBound...])]
            guard !halves[1].includes("::") else { return nil }
        }
        func groups(_ part: String) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var out: [UInt8] = []
            let items = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, item) in items.enumerated() {
                if index == items.count - 1, item.includes(".") {
                    guard let v4 = parseIPv4(item) else { return nil }
                    out += v4
                } else {
                    guard (1...4).contains(item.count), let value = UInt16(item, radix: 16) else { return nil }
                    out += [UInt8(value >> 8), UInt8(value & 0xFF)]
                }
            }
            return out
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count < 16 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }

    private static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(\.isNumber), let value = UInt8(part) else { return nil }
            out.append(value)
        }
        return out
    }
}
