import BeaconModel

/// The sighting, presence and region payloads written straight into a `JSONWriter` (the event encoder's
/// reused buffer): the same bytes as `EventPayload.sighting/presence/region(...).serialized`, members in the
/// documented order, without building a `JSONValue` tree. `EventPayloadWritingTests` holds both to the
/// same output.
extension EventPayload {
    /// The members every event payload starts with.
    public struct Head: Sendable {
        public var id: String
        public var gatewayID: String
        public var sequence: UInt64
        public var kind: EventKind
        public var time: Timestamp

        public init(id: String, gatewayID: String, sequence: UInt64, kind: EventKind, time: Timestamp) {
            self.id = id
            self.gatewayID = gatewayID
            self.sequence = sequence
            self.kind = kind
            self.time = time
        }

        /// The same members as a `JSONValue` head (for the tree-building payload functions).
        public var members: [(String, JSONValue)] {
            [
                ("schema", .string(EventEnvelope.schemaVersion)), ("id", .string(id)), ("gateway", .string(gatewayID)),
                ("seq", .int(Int64(clamping: sequence))), ("kind", .string(kind.rawValue)), ("time", .double(time)),
            ]
        }

        package func write(to writer: inout JSONWriter) {
            writer.key("schema")
            writer.string(EventEnvelope.schemaVersion)
            writer.key("id")
            writer.string(id)
            writer.key("gateway")
            writer.string(gatewayID)
            writer.key("seq")
            writer.int(Int64(clamping: sequence))
            writer.key("kind")
            writer.string(kind.rawValue)
            writer.key("time")
            writer.double(time)
        }
    }

    public static func writeSighting(_ event: SightingEvent, head: Head, to writer: inout JSONWriter) {
        writer.beginObject()
        head.write(to: &writer)
        writeBeaconMembers(event.beacon, to: &writer)
        writer.endObject()
    }

    public static func writePresence(_ event: PresenceEvent, head: Head, to writer: inout JSONWriter) {
        writer.beginObject()
        head.write(to: &writer)
        writer.key("state")
        writer.string(event.state.rawValue)
        writeBeaconMembers(event.beacon, to: &writer)
        // What the gateway learned of the beacon's timing: its interval as heard and its away time.
        if let interval = event.interval {
            writer.key("interval_s")
            writer.double(rounded(interval, places: 2))
        }
        if let awayAfter = event.awayAfter {
            writer.key("away_after_s")
            writer.double(rounded(awayAfter, places: 1))
        }
        writer.endObject()
    }

    public static func writeRegion(_ event: RegionEvent, head: Head, to writer: inout JSONWriter) {
        writer.beginObject()
        head.write(to: &writer)
        writer.key("event")
        writer.string(event.kind.rawValue)
        writer.key("region")
        writer.string(event.region)
        writer.key("beacon_id")
        writer.string(event.beaconID)
        writer.key("state")
        writer.string(event.state.rawValue)
        writer.key("since")
        if let since = event.since { writer.double(since) } else { writer.null() }
        writer.key("beacon")
        if let beacon = event.beacon {
            writer.beginObject()
            writeBeaconMembers(beacon, to: &writer)
            writer.endObject()
        } else {
            writer.null()
        }
        writer.endObject()
    }

    /// The members of `beaconMembers(_:)`, in its order and with its rounding.
    static func writeBeaconMembers(_ beacon: BeaconSnapshot, to writer: inout JSONWriter) {
        writer.key("beacon_id")
        writer.string(beacon.beaconID)
        writer.key("format")
        writer.string(beacon.format)
        writer.key("identifiers")
        writer.beginArray()
        for identifier in beacon.identifiers {
            writer.element()
            writer.string(identifier)
        }
        writer.endArray()
        writer.key("mac")
        writer.string(beacon.address.description)
        writer.key("name")
        if let name = beacon.name { writer.string(name) } else { writer.null() }
        writer.key("rssi")
        if let rssi = beacon.rssi { writer.int(Int64(rssi)) } else { writer.null() }
        writer.key("rssi_smoothed")
        if let smoothed = beacon.smoothedRSSI { writer.double(rounded(smoothed, places: 1)) } else { writer.null() }
        writer.key("distance")
        if let distance = beacon.distance { writer.double(rounded(distance, places: 2)) } else { writer.null() }
        writer.key("measured_power")
        if let power = beacon.measuredPower { writer.int(Int64(power)) } else { writer.null() }
        writer.key("report_rate")
        writer.double(rounded(beacon.reportRate, places: 2))
        writer.key("last_seen")
        writer.double(beacon.lastSeen)
        writer.key("fields")
        writer.beginObject()
        if !beacon.fields.isEmpty {
            for (name, value) in beacon.fields.sorted(by: { $0.key < $1.key }) {
                writer.key(named: name)
                writer.value(JSONValue(value))
            }
        }
        writer.endObject()
    }
}
