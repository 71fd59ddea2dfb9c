/// Who may read and who may act (docs/status-page.md, "The tokens"): pure, so every case is unit-tested.
///
/// Reading (`GET`, `HEAD`) needs the read token when one is set; without one (allowed on a loopback address only,
/// `check-config` refuses it elsewhere) anyone who can connect reads. Actions (`POST`) always need the action
/// token; without one actions are off (403). The action token also reads. A token comes as
/// `Authorization: Bearer <token>` (Prometheus' `authorization: credentials_file`, the page's script) or as the
/// password of `Authorization: Basic` (what a browser asks for); compared in constant time.
public struct HTTPAccess: Sendable, Equatable {
    public var readToken: String?
    public var actionToken: String?

    public init(readToken: String?, actionToken: String?) {
        self.readToken = readToken.flatMap { $0.isEmpty ? nil : $0 }
        self.actionToken = actionToken.flatMap { $0.isEmpty ? nil : $0 }
    }

    public enum Need: Sendable { case read, action }

    /// nil when allowed, else the refusal (401 with a challenge, or 403 when actions are off).
    public func check(_ request: HTTPRequest, needs: Need) -> HTTPRefusal? {
        let presented = Self.presentedToken(request.header("authorization"))
        switch needs {
        case .read:
            guard let readToken else { return nil }
            if let presented, Self.same(presented, readToken) || actionToken.map({ Self.same(presented, $0) }) == true {
                return nil
            }
            return HTTPRefusal(401, presented == nil ? "a token is needed" : "wrong token")
        case .action:
            guard let actionToken else {
                return HTTPRefusal(403, "actions are off: set http.action_token_file to allow them")
            }
            if let presented, Self.same(presented, actionToken) { return nil }
            return HTTPRefusal(401, presented == nil ? "the action token is needed" : "wrong action token")
        }
    }

    /// The challenge sent with a 401 (a browser then asks for the token as a password).
    public static let challenge = ("WWW-Authenticate", "Basic realm=\"beaconbridge\", charset=\"UTF-8\"")

    /// The token of a `Bearer` or `Basic` header (Basic: the password; the user name is ignored).
    static func presentedToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let scheme = parts[0].lowercased()
        let value = String(parts[1]).trimmingSpaces()
        if scheme == "bearer" { return value }
        guard scheme == "basic", let decoded = Base64.decode(value) else { return nil }
        guard let colon = decoded.firstIndex(of: 0x3A) else { return nil }
        return String(decoding: decoded[(colon + 1)...], as: UTF8.self)
    }

    /// Equal, in time that depends on the lengths only.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0xFF)
        }
        return difference == 0
    }
}

/// Standard base64 decoding (RFC 4648, padding optional); nil on any other character.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            let value: UInt32
            switch byte {
            case 0x41...0x5A: value = UInt32(byte - 0x41)
            case 0x61...0x7A: value = UInt32(byte - 0x61 + 26)
            case 0x30...0x39: value = UInt32(byte - 0x30 + 52)
            case 0x2B: value = 62
            case 0x2F: value = 63
            case 0x3D: continue
            default: return nil
            }
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((accumulator >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }
}
