import BeaconDelivery
import BeaconEvents
import BeaconModel
import Dispatch
import MQTTPublisher
import SQLiteStore
import Synchronization

#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

/// `beaconbridge-bench publish`: MQTT publish throughput (QoS 0 and 1) next to `mosquitto_pub -l` on the same
/// messages, outbox write rate next to a Python sqlite3 loop, outbox drain rate, and capture-to-subscriber
/// latency. Everything runs against a loopback mosquitto started here, with a subscriber attached.
enum PublishBench {
    static let messageCount = 50_000  // below 65,535: mosquitto_pub quits when its message id wraps
    static let writeCount = 200_000
    static let latencySamples = 2_000
    static let rounds = 3

    static func run() {
        let done = DispatchSemaphore(value: 0)
        Task {
            do { try await measure() } catch { say("  publish bench failed: \(error)") }
            done.signal()
        }
        done.wait()
    }

    static func measure() async throws {
        let directory = try BenchFiles.temporaryDirectory()
        defer { BenchFiles.remove(directory) }
        let broker = try BenchBroker(directory: directory)
        defer { broker.stop() }
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "bench")
        let envelopes = try makeEnvelopes(layout: layout, count: messageCount)
        let payloadFile = directory + "/payloads.txt"
        try BenchFiles.write(envelopes.map(\.payload).joined(separator: "\n") + "\n", to: payloadFile)
        let averageSize = envelopes.reduce(0) { $0 + $1.payloadSize } / envelopes.count
        say(
            "  \(messageCount) messages of ~\(averageSize) B, loopback mosquitto, one subscriber attached, in-flight window "
                + "\(benchSettings(port: 0).inflightWindow) (BB_WINDOW)")

        var referenceQoS1 = 0.0
        for qos: UInt8 in [0, 1] {
            let subscriber = try BenchSubscriber(port: broker.port, pattern: "bench/#")
            let messages = envelopes.map {
                var e = $0
                e.qos = qos
                return e
            }
            var references: [Double] = []
            var sustained: [Double] = []
            var bursts: [Double] = []
            for round in 0..<rounds {  // interleaved, medians reported: the machine's load varies
                references.append(
                    try await subscriber.measure(expected: messageCount) {
                        _ = try BenchProcess.run(
                            "/usr/bin/mosquitto_pub",
                            [
                                "-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "\(qos)",
                                "-t", "bench/ref", "-l",
                            ], stdin: payloadFile)
                    })
                sustained.append(
                    try await subscriber.measure(expected: messageCount, topicPrefix: "beaconbridge/") {
                        let outbox = try GatewayDatabase(
                            settings: OutboxSettings(
                                path: directory + "/paced-\(qos)-\(round).sqlite",
                                maxRows: 10_000_000, maxBytes: 1 << 34))
                        try await publishLive(messages, port: broker.port, layout: layout, outbox: outbox, paced: true)
                    })
                bursts.append(
                    try await subscriber.measure(expected: messageCount, topicPrefix: "beaconbridge/") {
                        let outbox = try GatewayDatabase(
                            settings: OutboxSettings(
                                path: directory + "/burst-\(qos)-\(round).sqlite",
                                maxRows: 10_000_000, maxBytes: 1 << 34))
                        try await publishLive(messages, port: broker.port, layout: layout, outbox: outbox, paced: false)
                    })
            }
            await subscriber.stop()
            let reference = median(references)
            let steady = median(sustained)
            let burst = median(bursts)
            if qos == 1 { referenceQoS1 = reference }
            say(
                "  publish QoS \(qos) (median of \(rounds)): \(rate(steady)) msg/s paced by the in-flight window "
                    + "(\(percent(steady, reference)), goal >= 80%); \(rate(burst)) msg/s as one burst through the outbox "
                    + "(\(percent(burst, reference)));  mosquitto_pub -l \(rate(reference)) msg/s")
        }

        let (direct, viaQueue, python) = try await outboxWriteRates(directory: directory, layout: layout)
        say(
            "  outbox write (batches of 100, median of \(rounds)): \(rate(direct)) events/s direct, \(rate(viaQueue)) events/s "
                + "through GatewayDatabase;  Python sqlite3 (5 columns, no index) \(python.map(rate) ?? "n/a") events/s  (goal 150,000)"
        )

        let drain = try await drainRate(directory: directory, layout: layout, port: broker.port, envelopes: envelopes)
        say(
            "  outbox drain (QoS 1): \(rate(drain)) events/s  vs mosquitto_pub -l QoS 1 \(rate(referenceQoS1)) msg/s  "
                + "(\(percent(drain, referenceQoS1)), goal >= 70%)")

        let (p50, p99) = try await latency(port: broker.port, layout: layout)
        say(
            "  capture-to-subscriber latency (QoS 1, one event every 2 ms, \(latencySamples) samples): "
                + "p50 \(format(p50 * 1000, 3)) ms, p99 \(format(p99 * 1000, 3)) ms  (goal p99 < 2 ms)")
    }

    /// Region events (QoS 1 by default) for 50 beacons in 4 regions, as the encoder renders them.
    static func makeEnvelopes(layout: TopicLayout, count: Int, start: UInt64 = 1) throws -> [EventEnvelope] {
        var encoder = EventEncoder(layout: layout, sequences: SequenceBlock(first: start, end: start + UInt64(count)))
        let now = SystemClock.realtime()
        return try (0..<count).map { index in
            let beacon = BeaconSnapshot(
                beaconID: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:\(index % 50)", format: "ibeacon",
                identifiers: ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", "1", "\(index % 50)"],
                address: BluetoothAddress(rawValue: 0xC0FF_EE00_0000 + UInt64(index % 50)), name: nil, rssi: -70,
                smoothedRSSI: -69.5, distance: 2.5, measuredPower: -59, reportRate: 1, lastSeen: now, fields: [:])
            let event = RegionEvent(
                kind: index % 2 == 0 ? .enter : .exit, time: now, region: "room\(index % 4)",
                beaconID: beacon.beaconID, state: index % 2 == 0 ? .inside : .outside, since: now, beacon: beacon)
            var envelope = try encoder.encode(.region(event))[0]
            envelope.retain = false  // like the mosquitto_pub reference; and no stale retained messages between phases
            return envelope
        }
    }

    /// Publishes through a connected `EventPublisher` as the daemon runs it (SQLite outbox behind a full
    /// in-flight window) until everything is acknowledged.
    /// `paced`: the producer keeps at most one in-flight window outstanding (`submitted - acknowledged`), the
    /// steady state of a gateway; otherwise everything is submitted at once and overflows into the outbox.
    static func publishLive(
        _ envelopes: [EventEnvelope], port: Int, layout: TopicLayout,
        outbox: (any EventOutbox)? = nil, paced: Bool = false
    ) async throws {
        let settings = benchSettings(port: port)
        let publisher = try EventPublisher(configuration: .init(mqtt: settings, layout: layout), outbox: outbox)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await publisher.run() }
            _ = await waitFor(seconds: 10) { publisher.counters.connected }
            for start in stride(from: 0, to: envelopes.count, by: 100) {
                if paced {
                    let deadline = now() + 30
                    var spins = 0
                    while now() < deadline {
                        let counters = publisher.counters
                        if counters.submitted - counters.acknowledged <= settings.inflightWindow - 100 { break }
                        spins += 1
                        if spins % 32 == 0 { try? await Task.sleep(for: .microseconds(50)) } else { await Task.yield() }
                    }
                }
                publisher.publish(Array(envelopes[start..<min(start + 100, envelopes.count)]))
            }
            _ = await waitFor(seconds: 120) { publisher.counters.acknowledged >= envelopes.count }
            await publisher.stop()
        }
    }

    static func benchSettings(port: Int) -> MQTTSettings {
        MQTTSettings(
            host: "127.0.0.1", port: port, keepalive: 30, reconnectMin: 0.05, reconnectMax: 0.5,
            inflightWindow: Int(getenv("BB_WINDOW").flatMap { Int(String(cString: $0)) } ?? 1000))
    }

    /// Medians of `rounds` interleaved runs, each into a fresh file: direct (`Outbox` on this thread), through
    /// `GatewayDatabase` (its serial queue), and the Python reference.
    static func outboxWriteRates(directory: String, layout: TopicLayout) async throws -> (Double, Double, Double?) {
        let envelopes = try makeEnvelopes(layout: layout, count: writeCount)
        let batches = stride(from: 0, to: envelopes.count, by: 100).map {
            Array(envelopes[$0..<min($0 + 100, envelopes.count)])
        }
        try BenchFiles.write(envelopes.map(\.payload).joined(separator: "\n"), to: directory + "/py-payloads.txt")
        var direct: [Double] = []
        var viaQueue: [Double] = []
        var python: [Double] = []
        for round in 0..<rounds {
            let queued = try await GatewayDatabase.open(
                settings: OutboxSettings(
                    path: directory + "/write-queue-\(round).sqlite",
                    maxRows: 10_000_000, maxBytes: 1 << 34))
            let start = now()
            for batch in batches { try await queued.append(batch) }
            viaQueue.append(Double(writeCount) / (now() - start))

            let settings = OutboxSettings(
                path: directory + "/write-direct-\(round).sqlite", maxRows: 10_000_000, maxBytes: 1 << 34)
            _ = try await GatewayDatabase.open(settings: settings)  // creates and migrates the file
            let database = try SQLiteDatabase(path: settings.path)
            try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            let outbox = try Outbox(database: database, maxRows: settings.maxRows, maxBytes: settings.maxBytes)
            direct.append(Double(writeCount) / (try timed { for batch in batches { try outbox.append(batch) } }))

            if let rate = try? pythonReference(directory: directory, round: round) { python.append(rate) }
        }
        return (median(direct), median(viaQueue), python.isEmpty ? nil : median(python))
    }

    /// The same payloads through Python's sqlite3 module: 100-row `executemany` transactions, WAL, a fresh file.
    static func pythonReference(directory: String, round: Int) throws -> Double? {
        let script = """
            import sqlite3, time
            rows = open('\(directory)/py-payloads.txt').read().split('\\n')
            db = sqlite3.connect('\(directory)/python-\(round).sqlite', isolation_level=None)
            db.execute('PRAGMA journal_mode=WAL'); db.execute('PRAGMA synchronous=NORMAL')
            db.execute('CREATE TABLE outbox (seq INTEGER PRIMARY KEY, topic TEXT, qos INTEGER, payload BLOB, capture_time REAL)')
            t = time.perf_counter()
            for i in range(0, len(rows), 100):
                db.execute('BEGIN')
                db.executemany('INSERT INTO outbox VALUES (?,?,?,?,?)', [(i + j + 1, 'beaconbridge/bench/region/x', 1, r.encode(), 1.0) for j, r in enumerate(rows[i:i+100])])
                db.execute('COMMIT')
            open('\(directory)/python.rate', 'w').write(str(len(rows) / (time.perf_counter() - t)))
            """
        try BenchFiles.write(script, to: directory + "/bench.py")
        guard try BenchProcess.run("/usr/bin/env", ["python3", directory + "/bench.py"]) == 0 else { return nil }
        return Double(try BenchFiles.read(directory + "/python.rate"))
    }

    /// Fills a database with the messages (as if the broker had been down), then times a connected
    /// publisher draining it until the subscriber has every message.
    static func drainRate(directory: String, layout: TopicLayout, port: Int, envelopes: [EventEnvelope]) async throws
        -> Double
    {
        let database = try GatewayDatabase(
            settings: OutboxSettings(
                path: directory + "/drain.sqlite", maxRows: 10_000_000,
                maxBytes: 1 << 34, batchSize: 1000))
        for start in stride(from: 0, to: envelopes.count, by: 1000) {
            try await database.append(Array(envelopes[start..<min(start + 1000, envelopes.count)]))
        }
        let subscriber = try BenchSubscriber(port: port, pattern: "beaconbridge/#")
        let configuration = EventPublisher.Configuration(
            mqtt: benchSettings(port: port), layout: layout,
            outbox: OutboxSettings(path: "", sightingMaxAge: 3600, batchSize: 1000))
        let publisher = try EventPublisher(configuration: configuration, outbox: database)
        let rate = try await subscriber.measure(expected: envelopes.count, topicPrefix: "beaconbridge/") {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await publisher.run() }
                _ = await waitFor(seconds: 120) { publisher.counters.acknowledged >= envelopes.count }
                await publisher.stop()
            }
        }
        await subscriber.stop()
        return rate
    }

    static func latency(port: Int, layout: TopicLayout) async throws -> (Double, Double) {
        let subscriber = try BenchSubscriber(port: port, pattern: "beaconbridge/#", recordLatency: true)
        try await subscriber.start()
        let publisher = try EventPublisher(
            configuration: .init(mqtt: benchSettings(port: port), layout: layout), outbox: nil)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await publisher.run() }
            _ = await waitFor(seconds: 10) { publisher.counters.connected }
            for index in 0..<latencySamples {
                if let envelope = try? makeEnvelopes(layout: layout, count: 1, start: UInt64(index + 1)).first {
                    publisher.publish([envelope])
                }
                try? await Task.sleep(for: .milliseconds(2))
            }
            _ = await waitFor(seconds: 10) { subscriber.count >= latencySamples }
            await publisher.stop()
        }
        await subscriber.stop()
        let sorted = subscriber.latencies.sorted()
        guard !sorted.isEmpty else { return (.nan, .nan) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }

    // MARK: small helpers

    /// Prints and flushes at once, so figures survive a later crash or kill.
    static func say(_ text: String) {
        print(text)
        fflush(nil)
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func timed(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return now() - start
    }

    /// Polls (every 2 ms by default), at most `seconds`.
    static func waitFor(seconds: Double, pollEvery: Duration = .milliseconds(2), _ condition: () -> Bool) async -> Bool
    {
        let deadline = now() + seconds
        while !condition() {
            if now() > deadline { return false }
            try? await Task.sleep(for: pollEvery)
        }
        return true
    }

    static func median(_ values: [Double]) -> Double {
        let finite = values.filter(\.isFinite).sorted()
        return finite.isEmpty ? .nan : finite[finite.count / 2]
    }

    static func rate(_ value: Double) -> String { value.isFinite ? String(Int(value.rounded())) : "n/a" }
    static func percent(_ value: Double, _ reference: Double) -> String {
        reference > 0 && value.isFinite && reference.isFinite
            ? "\(Int((100 * value / reference).rounded()))% of reference" : "no comparison"
    }
    static func format(_ value: Double, _ places: Int) -> String {
        guard value.isFinite else { return "n/a" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return String((value * scale).rounded() / scale)
    }
}
