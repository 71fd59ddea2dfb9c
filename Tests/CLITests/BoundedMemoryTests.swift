import BeaconBridgeCLI
import BeaconModel
import BeaconRuntime
import BeaconTracking
import Foundation
import TestSupport
import Testing

/// Issue 17.3: memory stays bounded when the pipeline outpaces the publisher. A full-speed replay of 300,000
/// reports from 5,000 beacons through the built binary to a real mosquitto: the peak RSS (the kernel's
/// `VmHWM`) stays under 64 MB and every event is delivered. No timing is asserted.
@Suite(.serialized) struct BoundedMemoryTests {
    static let beacons = 5_000
    static let reportsPerBeacon = 60

    /// 5,000 iBeacons (major 1, minor = index), each heard twice a second for 30 s, written straight to disk.
    static func writeCapture(path: String, start: Double) throws -> Int {
        let file = try SyntheticCaptureFile(path: path)
        var events: [[UInt8]] = []
        for index in 0..<beacons {
            let observation = Observation(
                timestamp: start, beaconID: "", format: "ibeacon",
                identifiers: [DaemonTestBed.uuid, "1", String(index)],
                address: BluetoothAddress(rawValue: 0xC0_BE_00_00_00_00 | UInt64(index)),
                rssi: -60, measuredPower: -59)
            guard
                let event = SyntheticAdvertisement.report(for: observation).flatMap(
                    AdvertisingReportEncoder.legacyEvent)
            else {
                throw TestFailure("no synthetic iBeacon event")
            }
            events.append(event)
        }
        let interval = 0.5
        for round in 0..<reportsPerBeacon {
            for index in 0..<beacons {
                var event = events[index]
                event[event.count - 1] = UInt8(bitPattern: Int8(-55 - index % 30 - round % 5))
                try file.append(
                    event: event,
                    timestamp: start + Double(round) * interval + Double(index) * interval / Double(beacons))
            }
        }
        try file.finish()
        return file.events
    }

    /// `VmHWM` (peak resident set) of a running process in bytes, nil once it has exited.
    static func peakResident(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    @Test func aFullSpeedReplayOf300000ReportsStaysUnder64MBAndDeliversEverything() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig(
            """
            regions:
              - name: hall
                match:
                  format: ibeacon
                  uuid: \(DaemonTestBed.uuid)
                enter:
                  rssi_above: -70
            """)
        let capture = bed.directory + "/many.btsnoop"
        let written = try Self.writeCapture(path: capture, start: Date().timeIntervalSince1970 - 3600)
        #expect(written == Self.beacons * Self.reportsPerBeacon)
        let subscriber = try await bed.startSubscriber()
        let process = try DaemonProcess(arguments: ["replay", capture, "--config", bed.configPath])
        var peak = 0
        var status: Int32?
        let deadline = Date().addingTimeInterval(900)
        while status == nil && Date() < deadline {
            if let resident = Self.peakResident(pid: process.pid) { peak = max(peak, resident) }
            status = await process.waitForExit(timeout: 0.05)
        }
        if status == nil { process.signal(SIGKILL) }
        let log = process.stderr
        print("bounded memory: peak RSS \(peak / 1024) KiB, exit \(status.map(String.init) ?? "none")")
        print(
            log.split(separator: "\n").filter {
                $0.contains("stopped") || $0.contains("undelivered") || $0.contains("replayed")
            }
            .joined(separator: "\n"))
        #expect(status == 0)
        #expect(peak > 0 && peak < 64 * 1024 * 1024, "peak RSS \(peak) bytes")
        let events = Int(logValue(log, message: "msg=stopped", key: "events") ?? "") ?? -1
        #expect(events > Self.beacons)  // at least a presence event per beacon, plus region events
        #expect(logValue(log, message: "msg=stopped", key: "dropped") == "0")
        #expect(logValue(log, message: "msg=stopped", key: "outbox_rows") == "0")
        #expect(Int(logValue(log, message: "msg=stopped", key: "acknowledged") ?? "") ?? -1 >= events)
        // What the broker passed on: every event id once at least.
        try await waitUntil("every event at the subscriber", timeout: 120) {
            Set(subscriber.messages.compactMap(\.sequence)).count >= events
        }
        await subscriber.stop()
    }
}

/// Issue 17.12: `decode --btsnoop` reads the capture record by record through a fixed buffer, never the whole
/// file: a 94 MiB capture (1,500 oversized ACL records of 64 KiB, skipped unread, between 2,000 advertising
/// reports) decodes every report while the process's peak RSS stays far below the file's size.
@Suite struct DecodeMemoryTests {
    @Test func decodingA94MiBCaptureNeverHoldsTheFile() async throws {
        let directory = try TestDirectory.make(prefix: "bb-decode-memory")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = BTSnoopWriter(datalink: .hciUART)
        let path = directory + "/big.btsnoop"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(FileDescriptorWrite.all(fd, writer.header()) == 0)
        let acl: [UInt8] = [0x02] + [UInt8](repeating: 0xAB, count: 64 * 1024)
        var reports = 0
        for index in 0..<2_000 {
            let observation = Observation(
                timestamp: 1_700_000_000 + Double(index) * 0.01, beaconID: "", format: "ibeacon",
                identifiers: [DaemonTestBed.uuid, "1", String(index % 50)],
                address: BluetoothAddress(rawValue: 0xC0_DE_00_00_00_00 | UInt64(index % 50)),
                rssi: -60, measuredPower: -59)
            let event = try #require(
                SyntheticAdvertisement.report(for: observation).flatMap(AdvertisingReportEncoder.legacyEvent))
            var chunk = writer.eventRecord(event, timestamp: observation.timestamp)
            reports += 1
            if index % 4 == 0 {
                for _ in 0..<3 {
                    chunk += writer.record(
                        payload: acl, flags: 0x1, drops: 0,
                        timestampMicros: BTSnoopTime.btsnoopMicros(fromUnixSeconds: observation.timestamp))
                }
            }
            #expect(FileDescriptorWrite.all(fd, chunk) == 0)
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 90 * 1024 * 1024)
        let process = try DaemonProcess(arguments: ["decode", "--btsnoop", path])
        var peak = 0
        var status: Int32?
        let deadline = Date().addingTimeInterval(300)
        while status == nil && Date() < deadline {
            if let resident = BoundedMemoryTests.peakResident(pid: process.pid) { peak = max(peak, resident) }
            status = await process.waitForExit(timeout: 0.02)
        }
        if status == nil { process.signal(SIGKILL) }
        print("decode memory: \(size / 1_048_576) MiB capture, peak RSS \(peak / 1024) KiB, exit \(status ?? -1)")
        #expect(status == 0)
        #expect(peak > 0 && peak < 48 * 1024 * 1024, "peak RSS \(peak) bytes for a \(size)-byte capture")
        // One JSON line per report, then the summary line (with its own count of reports).
        let lines = process.stdout.split(separator: "\n")
        #expect(lines.count == reports + 1)
        #expect(lines.dropLast().allSatisfy { $0.contains("\"ibeacon\"") })
        #expect(lines.last?.contains("\"reports\":\(reports)") == true, "\(lines.last ?? "")")
    }
}
