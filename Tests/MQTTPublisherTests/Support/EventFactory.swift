import BeaconDelivery
import BeaconEvents
import BeaconModel
import BeaconRuntime
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport

/// Engine events for the publisher tests, stamped with the wall clock (the outbox expires stale sightings
/// by wall-clock age).
enum EventFactory {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func beacon(_ index: Int, time: Double, distance: Double? = 1.25) -> BeaconSnapshot {
        BeaconSnapshot(
            beaconID: "ibeacon:\(uuid.lowercased()):1:\(index)", format: "ibeacon",
            identifiers: [uuid.lowercased(), "1", "\(index)"],
            address: BluetoothAddress(rawValue: 0xC0FFEE_000000 + UInt64(index)),
            name: index % 2 == 0 ? "tag \(index)" : nil,
            rssi: -60 - index % 20, smoothedRSSI: -61.37, distance: distance, measuredPower: -59, reportRate: 1.5,
            lastSeen: time, fields: ["battery_mv": .int(2950), "temperature_c": .double(21.5)])
    }

    static func sighting(_ index: Int, time: Double = SystemClock.realtime()) -> EngineEvent {
        .sighting(SightingEvent(time: time, beacon: beacon(index, time: time)))
    }

    static func presence(_ index: Int, state: PresenceState, time: Double = SystemClock.realtime()) -> EngineEvent {
        .presence(PresenceEvent(time: time, state: state, beacon: beacon(index, time: time)))
    }

    static func region(
        _ index: Int, kind: RegionEvent.Kind, region: String = "kitchen",
        time: Double = SystemClock.realtime()
    ) -> EngineEvent {
        let state: RegionState = kind == .exit ? .outside : .inside
        return .region(
            RegionEvent(
                kind: kind, time: time, region: region, beaconID: beacon(index, time: time).beaconID,
                state: state, since: time - 3, beacon: kind == .exit ? nil : beacon(index, time: time)))
    }
}

/// Encodes events with sequence numbers reserved in the database, as the daemon does.
struct SequencedEncoder {
    var encoder: EventEncoder
    let database: GatewayDatabase?

    init(layout: TopicLayout, database: GatewayDatabase?) {
        encoder = EventEncoder(layout: layout)
        self.database = database
    }

    mutating func encode(_ events: [EngineEvent]) async throws -> [EventEnvelope] {
        var out: [EventEnvelope] = []
        for event in events {
            if encoder.needsSequences {
                if let database {
                    encoder.refill(try await database.reserveSequences(1024))
                } else {
                    let start = encoder.sequences.end + 1
                    encoder.refill(SequenceBlock(first: start, end: start + 1024))
                }
            }
            out += try encoder.encode(event)
        }
        return out
    }
}

/// Runs `publisher.run()` for the duration of `body`, then stops it.
func withRunningPublisher(_ publisher: EventPublisher, _ body: () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await publisher.run() }
        do {
            try await body()
        } catch {
            await publisher.stop()
            throw error
        }
        await publisher.stop()
        try await group.waitForAll()
    }
}

/// Settings for a broker on loopback with fast reconnects.
func loopbackSettings(port: Int, inflightWindow: Int = 1000) -> MQTTSettings {
    MQTTSettings(
        host: "127.0.0.1", port: port, keepalive: 10, reconnectMin: 0.1, reconnectMax: 1,
        inflightWindow: inflightWindow)
}
