import BeaconEvents

/// Envelopes for outbox tests: a realistic payload whose size is known.
enum EnvelopeFactory {
    static func make(
        _ sequence: UInt64, kind: EventKind = .region, time: Double = 1_700_000_000,
        payloadBytes: Int = 200
    ) -> EventEnvelope {
        let head = #"{"id":"gw-\#(sequence)","kind":"\#(kind.rawValue)","pad":""#
        let pad = String(repeating: "x", count: max(0, payloadBytes - head.utf8.count - 2))
        return EventEnvelope(
            id: "gw-\(sequence)", gatewayID: "gw", sequence: sequence, captureTime: time,
            kind: kind, topic: "beaconbridge/gw/\(kind.rawValue)/b\(sequence % 7)",
            qos: kind == .sighting ? 0 : 1, retain: kind != .sighting, payload: head + pad + "\"}")
    }
}
