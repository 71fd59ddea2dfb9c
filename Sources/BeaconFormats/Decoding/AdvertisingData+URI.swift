/// The GAP URI structure (AD type 0x24, Core Specification Supplement part A 1.18): a scheme code (one UTF-8
/// encoded code point from the Bluetooth Assigned Numbers "URI scheme name string mapping") then the rest of
/// the URI as UTF-8 text. Code 0x01 means "no scheme prefix": the text is the whole URI.
public struct AdvertisedURI: Sendable, Equatable {
    /// The scheme code point (0x01 = none, 0x16 = `http:`, 0x17 = `https:`, ...).
    public var schemeCode: UInt32
    /// The scheme the code stands for, nil when this build does not know the code.
    public var scheme: String?
    /// The text after the scheme code.
    public var text: String

    /// The whole URI, nil when the scheme code is unknown.
    public var uri: String? { scheme.map { $0 + text } }

    /// Scheme codes 0x01-0x17 of the Assigned Numbers table (the IANA schemes in alphabetical order up to
    /// `https:`); later codes are kept as numbers.
    static let schemes: [UInt32: String] = [
        0x01: "", 0x02: "aaa:", 0x03: "aaas:", 0x04: "about:", 0x05: "acap:", 0x06: "acct:", 0x07: "cap:",
        0x08: "cid:", 0x09: "coap:", 0x0A: "coaps:", 0x0B: "crid:", 0x0C: "data:", 0x0D: "dav:", 0x0E: "dict:",
        0x0F: "dns:", 0x10: "file:", 0x11: "ftp:", 0x12: "geo:", 0x13: "go:", 0x14: "gopher:", 0x15: "h323:",
        0x16: "http:", 0x17: "https:",
    ]

    /// Parses the payload of one URI structure; nil when it is empty or its first code point is not valid UTF-8.
    package init?(_ bytes: [UInt8], _ range: Range<Int>) {
        guard let first = range.first else { return nil }
        let lead = bytes[first]
        let width: Int
        switch lead {
        case 0x01...0x7F: width = 1
        case 0xC2...0xDF: width = 2
        case 0xE0...0xEF: width = 3
        default: return nil
        }
        guard range.count >= width else { return nil }
        var code = width == 1 ? UInt32(lead) : UInt32(lead) & (width == 2 ? 0x1F : 0x0F)
        for index in (first + 1)..<(first + width) {
            let byte = bytes[index]
            guard byte & 0xC0 == 0x80 else { return nil }
            code = code << 6 | UInt32(byte & 0x3F)
        }
        schemeCode = code
        scheme = Self.schemes[code]
        text = String(decoding: bytes[(first + width)..<range.upperBound], as: UTF8.self)
    }
}

extension AdvertisingData {
    public static let uri: UInt8 = 0x24

    /// The first URI structure (AD 0x24), nil when there is none or it is malformed.
    public var uri: AdvertisedURI? {
        guard let structure = first(Self.uri) else { return nil }
        return AdvertisedURI(bytes, structure.range)
    }
}
