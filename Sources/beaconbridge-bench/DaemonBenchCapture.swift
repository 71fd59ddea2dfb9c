import BeaconBridgeCLI
import BeaconModel
import BeaconTracking

/// The synthetic captures the daemon bench replays, written straight to disk (millions of events).
enum DaemonBenchCapture {
    static let uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"

    /// `beacons` iBeacons (major = index / 100, minor = index), each heard `rate` times a second for `seconds`,
    /// spread evenly over each interval, RSSI -55 - (index % 40) dBm with ±4 dB of deterministic noise.
    /// Returns the number of events written.
    static func write(path: String, beacons: Int, rate: Int, seconds: Int, start: Timestamp) throws -> Int {
        let file = try SyntheticCaptureFile(path: path)
        let events = try beaconEvents(beacons)
        var noise: UInt64 = 0x2545_F491_4F6C_DD1D
        let interval = 1 / Double(rate)
        let spacing = interval / Double(beacons)
        for tick in 0..<(seconds * rate) {
            let tickStart = start + Double(tick) * interval
            for index in 0..<beacons {
                noise ^= noise << 13
                noise ^= noise >> 7
                noise ^= noise << 17
                var event = events[index]
                let rssi = -55 - index % 40 + Int(noise % 9) - 4
                event[event.count - 1] = UInt8(bitPattern: Int8(rssi))
                try file.append(event: event, timestamp: tickStart + Double(index) * spacing)
            }
        }
        try file.finish()
        return file.events
    }

    /// One LE Advertising Report event (event code first, RSSI last) per iBeacon: major = index / 100,
    /// minor = index, address C0:BE:00:00:xx:xx.
    static func beaconEvents(_ beacons: Int) throws -> [[UInt8]] {
        var events: [[UInt8]] = []
        for index in 0..<beacons {
            let observation = Observation(
                timestamp: 0, beaconID: "", format: "ibeacon",
                identifiers: [uuid, String(index / 100), String(index)],
                address: BluetoothAddress(rawValue: 0xC0_BE_00_00_00_00 | UInt64(index)),
                rssi: -60, measuredPower: -59)
            guard
                let event = SyntheticAdvertisement.report(for: observation).flatMap(
                    AdvertisingReportEncoder.legacyEvent)
            else {
                throw BenchFailure("no synthetic iBeacon event")
            }
            events.append(event)
        }
        return events
    }

    /// An idle capture: one advertisement of a device that matches no beacon format at the start and one at
    /// the end, so a gateway replaying it at speed 1 runs for `seconds` with nothing to track.
    static func writeIdle(path: String, seconds: Int, start: Timestamp) throws {
        let file = try SyntheticCaptureFile(path: path)
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02]
        let report = AdvertisingReport(
            timestamp: start, eventType: 0x10, isExtended: false,
            address: BluetoothAddress(rawValue: 0xC0_1D_1E_00_00_01), addressType: .publicDevice,
            rssi: -70, txPower: nil, data: data)
        guard let event = AdvertisingReportEncoder.legacyEvent(report) else { throw BenchFailure("no idle event") }
        // One report a second for the whole run: a replay caps idle gaps (`ReplayCursor.maxIdleGap`), so a capture
        // of two reports `seconds` apart ended after a few seconds and the reference printed "n/a".
        for second in 0...seconds { try file.append(event: event, timestamp: start + Double(second)) }
        try file.finish()
    }
}
