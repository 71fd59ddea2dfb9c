import BeaconModel

/// What `beaconbridge site push` publishes retained on `<prefix>/<site>/site/config` (docs/site-config.md):
/// `{"format": 1, "site": ..., "version": N, "sha256": "<hex of yaml>", "yaml": "...", "signature": "<hex>"}`.
/// The signature is HMAC-SHA256 with the site key over `signingText` (site, version and hash, domain-separated),
/// so the YAML is bound through its hash and neither the site nor the version can be changed without the key.
public struct SiteEnvelope: Sendable, Equatable {
    public static let format: Int64 = 1
    /// The first line of what is signed: no other message signed with the same key can be taken for this one.
    public static let domain = "beaconbridge site configuration v1"

    public var site: String
    public var version: Int64
    /// Lower-case hex SHA-256 of the UTF-8 bytes of `yaml`.
    public var sha256: String
    public var yaml: String
    /// Lower-case hex HMAC-SHA256 of `signingText`.
    public var signature: String

    public init(site: String, version: Int64, sha256: String, yaml: String, signature: String) {
        self.site = site
        self.version = version
        self.sha256 = sha256
        self.yaml = yaml
        self.signature = signature
    }

    /// A new envelope for `yaml`, hashed and signed with `key`.
    public static func signed(site: String, version: Int64, yaml: String, key: SiteKey) -> SiteEnvelope {
        let hash = SiteDigest.hex(SiteDigest.sha256(Array(yaml.utf8)))
        let text = signingText(site: site, version: version, sha256: hash)
        let signature = SiteDigest.hex(SiteDigest.hmacSHA256(key: key.bytes, data: Array(text.utf8)))
        return SiteEnvelope(site: site, version: version, sha256: hash, yaml: yaml, signature: signature)
    }

    /// The canonical text the signature covers: the domain, then site, version and hash, one a line.
    public static func signingText(site: String, version: Int64, sha256: String) -> String {
        "\(domain)\nsite=\(site)\nversion=\(version)\nsha256=\(sha256)\n"
    }

    /// The JSON text published.
    public var json: String {
        JSONValue.object([
            ("format", .int(SiteEnvelope.format)), ("site", .string(site)), ("version", .int(version)),
            ("sha256", .string(sha256)), ("yaml", .string(yaml)), ("signature", .string(signature)),
        ]).serialized
    }

    /// Reads an envelope's fields; the reason when the text is not JSON, is not this format or lacks a field.
    /// Checks nothing else (site, signature, hash, version are `SiteVerifier`'s).
    public static func parse(_ payload: [UInt8]) -> Result<SiteEnvelope, SiteRefusal> {
        guard let text = String(validating: payload, as: UTF8.self) else {
            return .failure(SiteRefusal(.malformed, "the envelope is not UTF-8 text"))
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: text, maxDepth: 4) } catch {
            return .failure(SiteRefusal(.malformed, "the envelope is not JSON: \(error)"))
        }
        guard case .object = value else {
            return .failure(SiteRefusal(.malformed, "the envelope is not a JSON object"))
        }
        guard case .int(let format)? = value["format"] else {
            return .failure(SiteRefusal(.malformed, "the envelope has no `format` number"))
        }
        guard format == SiteEnvelope.format else {
            return .failure(SiteRefusal(.malformed, "envelope format \(format) is not known (this gateway reads 1)"))
        }
        var missing: [String] = []
        func string(_ key: String) -> String {
            if case .string(let s)? = value[key] { return s }
            missing.append(key)
            return ""
        }
        let site = string("site")
        let sha256 = string("sha256")
        let yaml = string("yaml")
        let signature = string("signature")
        var version: Int64 = 0
        if case .int(let v)? = value["version"] { version = v } else { missing.append("version") }
        guard missing.isEmpty else {
            return .failure(
                SiteRefusal(
                    .malformed,
                    "the envelope lacks \(missing.map { "`\($0)`" }.joined(separator: ", ")) (or has the wrong type)"))
        }
        guard version >= 1 else {
            return .failure(SiteRefusal(.malformed, "version \(version) is not a positive number"))
        }
        return .success(SiteEnvelope(site: site, version: version, sha256: sha256, yaml: yaml, signature: signature))
    }
}
