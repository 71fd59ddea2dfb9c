/// A message the client library or the broker would not take, and whether trying again can help.
///
/// Sources: the client library refused it before sending (larger than the broker's maximum packet size, a
/// payload over the protocol's limit, a topic that is not valid UTF-8), the broker answered with an MQTT 5
/// PUBACK/PUBREC reason code of 0x80 or above, or (MQTT 3.1.1, which has no reason codes) the broker closed the
/// connection right after the message was sent, repeatedly (`RefusalTracker`).
public struct PublishRefusal: Sendable, Equatable, CustomStringConvertible {
    public enum Source: String, Sendable, Equatable {
        /// The client library refused to send it (`MOSQ_ERR_*` in `code`).
        case client
        /// The broker's MQTT 5 reason code (in `code`).
        case broker
        /// The broker dropped the connection right after it was sent (MQTT 3.1.1).
        case connection
    }

    public var source: Source
    public var code: Int
    /// What happened, for logs, telemetry and the dead-letter table.
    public var reason: String
    /// True when sending the same bytes again cannot succeed (not authorised, too large, invalid topic).
    public var permanent: Bool

    public init(source: Source, code: Int, reason: String, permanent: Bool) {
        self.source = source
        self.code = code
        self.reason = reason
        self.permanent = permanent
    }

    /// An MQTT 5 PUBACK/PUBREC reason code; nil when it means success (below 0x80: 0x00 success, 0x10 no
    /// matching subscribers). Quota exceeded (0x97) and packet identifier in use (0x91) are worth retrying;
    /// every other failure code is permanent (MQTT 5.0 section 3.4.2.1).
    public static func broker(reasonCode: Int) -> PublishRefusal? {
        guard reasonCode >= 0x80 else { return nil }
        let transient: Set<Int> = [0x91, 0x97]
        return PublishRefusal(
            source: .broker, code: reasonCode,
            reason: "broker refused: \(reasonName(reasonCode)) (0x\(String(reasonCode, radix: 16)))",
            permanent: !transient.contains(reasonCode))
    }

    /// The broker closed the connection right after the message was sent, `attempts` times in a row.
    public static func connectionDropped(attempts: Int) -> PublishRefusal {
        PublishRefusal(
            source: .connection, code: 0,
            reason: "broker closed the connection right after this message, \(attempts) times in a row",
            permanent: false)
    }

    /// The names MQTT 5.0 gives the PUBACK/PUBREC failure codes.
    public static func reasonName(_ code: Int) -> String {
        switch code {
        case 0x80: "unspecified error"
        case 0x83: "implementation specific error"
        case 0x87: "not authorized"
        case 0x90: "topic name invalid"
        case 0x91: "packet identifier in use"
        case 0x95: "packet too large"
        case 0x97: "quota exceeded"
        case 0x99: "payload format invalid"
        default: "reason code \(code)"
        }
    }

    public var description: String { reason }
}
