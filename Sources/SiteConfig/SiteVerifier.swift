import BeaconConfig
import BeaconConfigReading
import YAMLConfig

/// A site configuration that passed every check: the envelope and the whole configuration it makes with this
/// gateway's own file.
public struct SiteAcceptance: Sendable {
    public var envelope: SiteEnvelope
    public var configuration: GatewayConfiguration
}

/// The checks a gateway (and `site push`, before publishing) makes on a site configuration envelope, in this
/// order, each with its reason (`SiteRefusal.Reason`): larger than `max_bytes`; not JSON or a field missing;
/// another site; a signature that does not match (compared in constant time); the YAML's hash not the one
/// signed; a version not newer than the running one; YAML that does not parse; a shared part that sets a key
/// only the local file may; a merged configuration that does not validate (the reader of `check-config`).
/// The local-only keys are checked before the merge because the merge keeps only the shared sections: a
/// `mqtt:` in the shared part would otherwise be dropped silently rather than named.
/// No I/O: the key and the local tree are read by the caller.
public struct SiteVerifier: Sendable {
    public var settings: SiteSettings
    public var key: SiteKey
    /// The gateway's own file as a tree, and its path (for the problems' places).
    public var localRoot: ConfigNode
    public var localFile: String
    public var environment: ConfigEnvironment
    /// Whether the files the merged configuration names (certificates, key files) must exist here.
    public var checksFiles: Bool

    public init(
        settings: SiteSettings, key: SiteKey, localRoot: ConfigNode, localFile: String,
        environment: ConfigEnvironment, checksFiles: Bool = true
    ) {
        self.settings = settings
        self.key = key
        self.localRoot = localRoot
        self.localFile = localFile
        self.environment = environment
        self.checksFiles = checksFiles
    }

    /// Checks `payload` against the version running (0: none yet). Nothing is applied here.
    public func verify(_ payload: [UInt8], running: Int64) -> Result<SiteAcceptance, SiteRefusal> {
        guard payload.count <= settings.maxBytes else {
            return .failure(
                SiteRefusal(
                    .tooLarge, "the envelope is \(payload.count) bytes; site.max_bytes is \(settings.maxBytes)"))
        }
        let envelope: SiteEnvelope
        switch SiteEnvelope.parse(payload) {
        case .success(let parsed): envelope = parsed
        case .failure(let refusal): return .failure(refusal)
        }
        guard envelope.site == settings.id else {
            return .failure(
                SiteRefusal(.otherSite, "signed for site `\(envelope.site)`; this gateway follows `\(settings.id)`"))
        }
        let text = SiteEnvelope.signingText(site: envelope.site, version: envelope.version, sha256: envelope.sha256)
        let expected = SiteDigest.hmacSHA256(key: key.bytes, data: Array(text.utf8))
        guard let given = SiteDigest.bytes(hex: envelope.signature),
            SiteDigest.constantTimeEqual(given, expected)
        else {
            return .failure(
                SiteRefusal(
                    .badSignature,
                    "the signature does not match: tampered with, or signed with another key than site.key_file's"))
        }
        let hash = SiteDigest.hex(SiteDigest.sha256(Array(envelope.yaml.utf8)))
        guard hash == envelope.sha256.lowercased() else {
            return .failure(
                SiteRefusal(.hashMismatch, "the YAML's SHA-256 is \(hash), not the signed \(envelope.sha256)"))
        }
        guard envelope.version > running else {
            return .failure(
                SiteRefusal(
                    .notNewer, "version \(envelope.version) is not newer than the running version \(running)"))
        }
        return check(envelope)
    }

    /// The YAML checks alone (parse, local-only keys, validation merged with the local file).
    public func check(_ envelope: SiteEnvelope) -> Result<SiteAcceptance, SiteRefusal> {
        let limits = YAMLLimits(maxBytes: settings.maxBytes)
        let document: SiteDocument
        switch SiteDocument.parse(envelope.yaml, label: "site v\(envelope.version)", limits: limits) {
        case .success(let parsed): document = parsed
        case .failure(let refusal): return .failure(refusal)
        }
        let localOnly = document.localOnlyProblems
        guard localOnly.isEmpty else {
            return .failure(
                SiteRefusal(
                    .localOnly, "the shared part sets keys only each gateway's own file may set", problems: localOnly))
        }
        return document.validate(
            with: localRoot, localFile: localFile, environment: environment, checksFiles: checksFiles
        ).map { SiteAcceptance(envelope: envelope, configuration: $0) }
    }
}
