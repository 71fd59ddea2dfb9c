import BeaconModel

/// One event ready to publish: where it goes, how, and its JSON payload, plus the identity every event
/// carries (schema version, event id, gateway id, sequence number, capture time).
///
/// The envelope is what the outbox stores and the publisher sends. Its fields are repeated inside the JSON
/// payload (`schema`, `id`, `gateway`, `seq`, `kind`, `time`) except for ESPresense payloads, whose format is
/// ESPresense's own.
public struct EventEnvelope: Sendable, Equatable {
    /// Version of the JSON event schema (docs/mqtt.md). Bumped on incompatible payload changes.
    public static let schemaVersion = "1"

    /// Unique event id: `<gateway_id>-<sequence>`. Unique because the sequence never repeats for a gateway.
    public var id: String
    public var gatewayID: String
    /// Per-gateway sequence number; strictly increasing across restarts (not gapless).
    public var sequence: UInt64
    /// When the advertisement behind the event was captured (seconds since the Unix epoch).
    public var captureTime: Timestamp
    public var kind: EventKind
    public var topic: String
    public var qos: UInt8
    public var retain: Bool
    /// JSON text (UTF-8).
    public var payload: String

    public init(
        id: String, gatewayID: String, sequence: UInt64, captureTime: Timestamp, kind: EventKind,
        topic: String, qos: UInt8, retain: Bool, payload: String
    ) {
        self.id = id
        self.gatewayID = gatewayID
        self.sequence = sequence
        self.captureTime = captureTime
        self.kind = kind
        self.topic = topic
        self.qos = qos
        self.retain = retain
        self.payload = payload
    }

    /// The event id for a gateway and sequence number.
    public static func eventID(gatewayID: String, sequence: UInt64) -> String {
        // Built by hand: this runs for every event, and interpolation costs several times more.
        let digits = String(sequence)
        var id = ""
        id.reserveCapacity(gatewayID.utf8.count + 1 + digits.utf8.count)
        id += gatewayID
        id += "-"
        id += digits
        return id
    }

    /// Payload size in bytes.
    public var payloadSize: Int { payload.utf8.count }
}
