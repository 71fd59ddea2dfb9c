import BeaconFormats
import DeviceProtocols
import ESPHomeProxy
import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge-bench esphome`: the ESPHome Bluetooth proxy forwarding 5,000 advertisements/s to one
/// plaintext client on loopback (issue 13). The feeder hands events over as the daemon does (`submit`, one
/// call per HCI event); each advertisement carries its hand-over time, so the reader (a thread of this
/// process reading the socket and decoding the frames) measures capture-to-client latency. CPU of the proxy =
/// process CPU with the proxy − the reader thread's CPU − the same feeder without a proxy.
/// `BENCH_ESPHOME_SECONDS` (default 10) sets the length of each run.
enum ESPHomeBench {
    static let rate = 5_000
    static let tick = 0.01

    static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func threadCPU() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// An LE Advertising Report event whose AD data is manufacturer data (company 0xFFFF) holding `stamp`.
    static func event(index: Int, stamp: Double) -> CapturedHCIEvent {
        let bits = stamp.bitPattern
        let data: [UInt8] =
            [0x02, 0x01, 0x06, 0x0B, 0xFF, 0xFF, 0xFF]
            + (0..<8).map { UInt8(truncatingIfNeeded: bits >> (8 * UInt64($0))) }
        let address: [UInt8] = [
            UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8), 0x33, 0x44, 0x55, 0x02,
        ]
        var body: [UInt8] = [0x02, 0x01, 0x00, 0x01] + address + [UInt8(data.count)] + data + [0xC4]
        body.insert(UInt8(body.count), at: 0)
        return CapturedHCIEvent(timestamp: stamp, bytes: [0x3E] + body)
    }

    /// Feeds `rate` events/s for `seconds` into `submit`; returns the process CPU seconds used meanwhile.
    static func feed(seconds: Double, submit: (CapturedHCIEvent) -> Void) -> (cpu: Double, sent: Int) {
        let perTick = Int(Double(rate) * tick)
        let start = monotonic()
        let cpuStart = processCPU()
        var sent = 0
        var next = start
        for _ in 0..<Int((seconds / tick).rounded()) {
            for _ in 0..<perTick {
                submit(event(index: sent, stamp: monotonic()))
                sent += 1
            }
            next += tick
            let wait = next - monotonic()
            if wait > 0 { usleep(UInt32(wait * 1e6)) }
        }
        return (processCPU() - cpuStart, sent)
    }

    final class Reader: @unchecked Sendable {
        let latencies = Mutex<[Double]>([])
        let cpu = Atomic<UInt64>(0)
        let done = Atomic<Bool>(false)
        let subscribed = Atomic<Bool>(false)

        func run(port: Int, expected: Int) {
            guard let fd = connectLoopbackTCP(port: port) else {
                done.store(true, ordering: .releasing)
                return
            }
            var hello: [UInt8] = []
            ESPHomeFrameEncoder.plaintext(
                type: ESPHomeMessageType.helloRequest, body: [0x0A, 0x05] + Array("bench".utf8), into: &hello)
            ESPHomeFrameEncoder.plaintext(
                type: ESPHomeMessageType.subscribeBluetoothLEAdvertisementsRequest, body: [0x08, 0x01], into: &hello)
            _ = hello.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            subscribed.store(true, ordering: .releasing)
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var decoder = ESPHomeFrameDecoder(framing: .plaintext, maxFrameSize: 1 << 20)
            var buffer = [UInt8](repeating: 0, count: 65536)
            var local: [Double] = []
            local.reserveCapacity(expected)
            let cpuStart = ESPHomeBench.threadCPU()
            while local.count < expected {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                decoder.append(buffer[0..<count])
                let now = ESPHomeBench.monotonic()
                while let frame = try? decoder.next() {
                    guard frame.type == ESPHomeMessageType.bluetoothLERawAdvertisementsResponse else { continue }
                    var outer = ProtobufReader(frame.body)
                    while let (_, value) = try? outer.next() {
                        guard case let .bytes(message) = value else { continue }
                        var inner = ProtobufReader(message)
                        while let (field, item) = try? inner.next() {
                            if field == 4, case let .bytes(data) = item, data.count == 15 {
                                var bits: UInt64 = 0
                                for (shift, byte) in data.suffix(8).enumerated() {
                                    bits |= UInt64(byte) << (8 * UInt64(shift))
                                }
                                local.append(now - Double(bitPattern: bits))
                            }
                        }
                    }
                }
            }
            cpu.store((ESPHomeBench.threadCPU() - cpuStart).bitPattern, ordering: .relaxed)
            latencies.withLock { $0 = local }
            close(fd)
            done.store(true, ordering: .releasing)
        }
    }

    final class Stopped: Sendable { let flag = Atomic<Bool>(false) }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }

    static func run() {
        let seconds = Double(ProcessInfo.processInfo.environment["BENCH_ESPHOME_SECONDS"] ?? "") ?? 10
        let baseline = feed(seconds: seconds) { _ in }
        let identity = ESPHomeDeviceIdentity(
            name: "bench", friendlyName: "bench", macAddress: "02:00:00:00:00:01",
            bluetoothMACAddress: "02:00:00:00:00:01", version: "bench", usesPassword: false)
        let server = ESPHomeProxyServer(
            configuration: .init(
                bind: "127.0.0.1", port: 0, session: .init(identity: identity),
                allow: ESPHomeAPISettings.privateNetworks, maxClients: 4,
                clientQueueBytes: 4 << 20, batchInterval: 0.1))
        do { try server.start() } catch {
            print("esphome: cannot start the proxy: \(error)")
            return
        }
        let reader = Reader()
        let expected = Int(seconds * Double(rate))
        let port = server.port
        Thread.detachNewThread { reader.run(port: port, expected: expected) }
        let deadline = monotonic() + 10
        while server.subscribedClients < 1, monotonic() < deadline { usleep(1000) }
        let cpuBefore = processCPU()
        let proxied = feed(seconds: seconds) { server.submit($0) }
        while !reader.done.load(ordering: .acquiring), monotonic() < deadline + seconds + 10 { usleep(10_000) }
        let total = processCPU() - cpuBefore
        let readerCPU = Double(bitPattern: reader.cpu.load(ordering: .relaxed))
        let stopped = Stopped()
        Task {
            await server.stop(drainTimeout: 0.5)
            stopped.flag.store(true, ordering: .releasing)
        }
        while !stopped.flag.load(ordering: .acquiring) { usleep(1000) }
        let latencies = reader.latencies.withLock { $0 }.sorted()
        let proxyCPU = max(0, total - readerCPU - baseline.cpu)
        let counters = server.counters.snapshot
        print(
            String(
                format: "esphome: forwarding %d advertisements/s to one client for %.0f s: proxy CPU %.2f %% of a core "
                    + "(process %.2f %% - reader thread %.2f %% - feeder alone %.2f %%); goal < 1 %%", rate, seconds,
                100 * proxyCPU / seconds, 100 * total / seconds, 100 * readerCPU / seconds, 100 * baseline.cpu / seconds
            ))
        print(
            String(
                format: "esphome: capture-to-client latency p50 %.1f ms, p99 %.1f ms, max %.1f ms (goal p99 < 150 ms); "
                    + "received %d of %d, dropped %d", 1000 * percentile(latencies, 0.5),
                1000 * percentile(latencies, 0.99),
                1000 * (latencies.last ?? .nan), latencies.count, proxied.sent, Int(counters.advertisementsDropped)))
    }
}
