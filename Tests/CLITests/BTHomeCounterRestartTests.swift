import BeaconConfigReading
import BeaconFormats
import BeaconModel
import BeaconTracking
import Foundation
import TestSupport
import Testing

/// BTHome replay protection survives a gateway restart: the last accepted encryption counter per device is kept
/// in the database, so frames replayed after the restart (counters not newer than before it) are duplicates.
@Suite struct BTHomeCounterRestartTests {
    /// bthome-ble's published example key and device.
    static let key = "231d39c1d7cc1ab1aee224cd096db932"
    static let device = "54:48:E6:8F:80:A5"

    /// An encrypted BTHome frame (temperature in 0.01 °C) with `counter`, as one advertising report event.
    static func event(counter: UInt32, centidegrees: Int16) throws -> [UInt8] {
        let keyBytes = try #require(HexBytes.parse(key))
        let cipher = try #require(AES128(key: keyBytes))
        let ccm = AESCCM(cipher: cipher, tagLength: 4)
        let counterBytes = (0..<4).map { UInt8(truncatingIfNeeded: counter >> (8 * $0)) }
        let mac: [UInt8] = [0x54, 0x48, 0xE6, 0x8F, 0x80, 0xA5]
        let value = UInt16(bitPattern: centidegrees)
        let plain: [UInt8] = [0x02, UInt8(value & 0xFF), UInt8(value >> 8)]
        let sealed = try #require(ccm.seal(plain, nonce: mac + [0xD2, 0xFC, 0x41] + counterBytes))
        let service: [UInt8] = [0xD2, 0xFC, 0x41] + sealed.ciphertext + counterBytes + sealed.tag
        let data: [UInt8] = [0x02, 0x01, 0x06, UInt8(service.count + 1), 0x16] + service
        let address = try #require(BluetoothAddress(string: device))
        let report = AdvertisingReport(
            timestamp: 0, eventType: 0x10, isExtended: false,
            address: address, addressType: .publicDevice,
            rssi: -60, txPower: nil, data: data)
        return try #require(AdvertisingReportEncoder.legacyEvent(report))
    }

    func writeCapture(
        _ bed: DaemonTestBed, _ name: String, start: Double,
        _ frames: [(counter: UInt32, centidegrees: Int16)]
    ) throws -> String {
        let writer = BTSnoopWriter(datalink: .hciUART)
        var bytes = writer.header()
        for (index, frame) in frames.enumerated() {
            bytes += writer.eventRecord(
                try Self.event(counter: frame.counter, centidegrees: frame.centidegrees),
                timestamp: start + Double(index))
        }
        let path = bed.directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func replayedCountersAfterARestartAreDuplicates() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let keyFile = bed.directory + "/bthome.key"
        try Self.key.write(toFile: keyFile, atomically: true, encoding: .utf8)
        _ = chmod(keyFile, 0o600)
        try bed.writeConfig(
            """
            formats:
              bthome_keys:
                - address: \(Self.device)
                  key_file: \(keyFile)
            tracking:
              publish:
                sighting_interval_s: 0
            """)
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let topic = "\(bed.topicBase)/sighting/bthome:\(Self.device)"

        // First run: counters 10, 11, 12 (20, 21, 22 °C) are accepted and saved.
        let first = try writeCapture(
            bed, "first.btsnoop", start: 1_700_000_000,
            [(10, 2000), (11, 2100), (12, 2200)])
        let run1 = try await BuiltBinary.run(["replay", first, "--config", bed.configPath], timeout: 60)
        #expect(run1.status == 0, "stderr: \(run1.stderr)")
        #expect(
            logValue(run1.stderr, message: "capture replayed", key: "beacon_observations") == "3",
            "stderr: \(run1.stderr)")
        // Every sighting handed to the broker (none dropped on the way out).
        #expect(logValue(run1.stderr, message: "stopped", key: "dropped") == "0", "stderr: \(run1.stderr)")
        try await waitUntil("the first run's three readings", timeout: 60) {
            Self.temperatures(subscriber.messages(under: topic)).count >= 3
        }

        // Second run over the same database: 11 and 12 again (forged readings 31, 32 °C) are duplicates, 13 is new.
        let second = try writeCapture(
            bed, "second.btsnoop", start: 1_700_000_100,
            [(11, 3100), (12, 3200), (13, 2300)])
        let run2 = try await BuiltBinary.run(["replay", second, "--config", bed.configPath], timeout: 60)
        #expect(run2.status == 0, "stderr: \(run2.stderr)")
        #expect(
            logValue(run2.stderr, message: "capture replayed", key: "beacon_observations") == "1",
            "stderr: \(run2.stderr)")
        try await waitUntil("the second run's reading", timeout: 60) {
            Self.temperatures(subscriber.messages(under: topic)).contains(23)
        }
        let readings = Self.temperatures(subscriber.messages(under: topic))
        #expect(!readings.contains(31) && !readings.contains(32), "\(readings)")
        #expect(Set(readings) == [20, 21, 22, 23], "\(readings)")
    }

    static func temperatures(_ messages: [TestSubscriber.Message]) -> [Double] {
        messages.compactMap { message -> Double? in
            switch message.json?["fields"]?["temperature_c"] {
            case let .double(value)?: return value
            case let .int(value)?: return Double(value)  // 20.00 °C is written as 20
            default: return nil
            }
        }
    }
}
