/// Why a site configuration was refused: a short code (published in the gateway's status) and the message.
public struct SiteRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The checks in the order `SiteVerifier` makes them.
    public enum Reason: String, Sendable, Equatable {
        /// Larger than `site.max_bytes`: not read.
        case tooLarge = "too_large"
        /// Not UTF-8, not JSON, another format, a field missing or of the wrong type.
        case malformed
        /// Signed for another site.
        case otherSite = "other_site"
        /// The signature does not match (tampered, or signed with another key).
        case badSignature = "bad_signature"
        /// The YAML is not the one the signature covers (its hash differs).
        case hashMismatch = "hash_mismatch"
        /// Not newer than the version running (a replay, or an older push).
        case notNewer = "not_newer"
        /// The shared part sets keys only a gateway's own file may set.
        case localOnly = "local_only"
        /// The YAML does not parse, or the merged configuration does not validate.
        case invalid
    }

    public var reason: Reason
    public var message: String
    /// The problems, one `FILE:LINE:COL: KEYPATH: MESSAGE` line each (for `invalid` and `local_only`).
    public var problems: [String]

    public init(_ reason: Reason, _ message: String, problems: [String] = []) {
        self.reason = reason
        self.message = message
        self.problems = problems
    }

    public var description: String {
        problems.isEmpty
            ? "\(reason.rawValue): \(message)" : "\(reason.rawValue): \(message): \(problems.joined(separator: "; "))"
    }
}
