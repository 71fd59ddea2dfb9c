import BeaconCore
#if canImport(Glibc)
import Glibc
#endif

/// Decoded advertising reports per second on one core, from HCI event bytes to beacons and observations,
/// for a realistic mix; next to it, a plain copy-and-checksum loop over the same bytes as an in-run reference.
enum DecodeBench {
    /// Deterministic pseudo-random bytes (xorshift), so every run decodes the same mix.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
        mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
    }

    /// 30% iBeacon, 15% Eddystone-UID, 10% Eddystone-TLM, 30% Apple Continuity noise, 15% random
    /// manufacturer data, as legacy LE Advertising Report events (H4 framed, one report each).
    static func mix(count: Int) -> [[UInt8]] {
        var random = Random(state: 0x9E37_79B9_7F4A_7C15)
        let uuids = (0..<8).map { _ in random.bytes(16) }
        return (0..<count).map { index in
            let data: [UInt8]
            switch index % 20 {
            case 0..<6:
                data = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuids[index % 8]
                    + [0x00, UInt8(index % 7), random.byte(), random.byte(), 0xC5]
            case 6..<9:
                data = [0x03, 0x03, 0xAA, 0xFE, 0x17, 0x16, 0xAA, 0xFE, 0x00, 0xEE] + random.bytes(16) + [0, 0]
            case 9, 10:
                data = [0x03, 0x03, 0xAA, 0xFE, 0x11, 0x16, 0xAA, 0xFE, 0x20, 0x00, 0x0B, 0xB8, 0x17, 0x80]
                    + random.bytes(8)
            case 11..<17:
                data = [0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05, random.byte(), random.byte()]
                    + random.bytes(3)
            default:
                let length = 4 + Int(random.byte() % 20)
                data = [0x02, 0x01, 0x06, UInt8(length + 1), 0xFF] + random.bytes(length)
            }
            let address = random.bytes(6)
            let params: [UInt8] = [0x02, 0x01, 0x00, 0x01] + address + [UInt8(data.count)] + data + [0xB0 | random.byte() & 0x0F]
            return [0x04, 0x3E, UInt8(params.count)] + params
        }
    }

    static func run() {
        let events = mix(count: 4096)
        let decoder = BeaconDecoder()
        let clock = ContinuousClock()
        let maxRounds = 2_000, budget = Duration.seconds(3)

        // Decode: HCI bytes -> reports -> AD + beacons -> observations.
        var reports = 0, beacons = 0, observations = 0, rounds = 0
        let start = clock.now
        let cpuStart = threadCPUSeconds()
        while rounds < maxRounds, clock.now - start < budget {
            for event in events {
                try? HCIEventParser.forEachReport(in: event, timestamp: 1) { report in
                    let decoded = decoder.decode(report)
                    reports += 1
                    beacons += decoded.beacons.count
                    observations += decoded.observations(includeDevices: false).count
                }
            }
            rounds += 1
        }
        let decodeSeconds = seconds(clock.now - start)
        let decodeCPU = threadCPUSeconds() - cpuStart

        // Reference: copy each event's bytes and checksum them.
        var checksum: UInt64 = 0, copied = 0, referenceRounds = 0
        let referenceStart = clock.now
        let referenceCPUStart = threadCPUSeconds()
        while referenceRounds < maxRounds, clock.now - referenceStart < budget {
            for event in events {
                let copy = Array(event)
                for byte in copy { checksum = checksum &* 31 &+ UInt64(byte) }
                copied += 1
            }
            referenceRounds += 1
        }
        let referenceSeconds = seconds(clock.now - referenceStart)
        let referenceCPU = threadCPUSeconds() - referenceCPUStart

        // Per core: divide by the thread's CPU time (the machine may be shared); wall-clock figures beside.
        let rate = Double(reports) / decodeCPU
        print("  decode: \(format(rate)) reports/s per core (CPU time; \(format(Double(reports) / decodeSeconds)) wall), "
              + "\(reports) reports, \(beacons) beacons, \(observations) observations, \(format(decodeCPU)) s CPU")
        print("  reference copy+checksum: \(format(Double(copied) / referenceCPU)) events/s per core "
              + "(\(format(Double(copied) / referenceSeconds)) wall; checksum \(checksum & 0xFFFF))")
        print("  goal >= 2,000,000 reports/s: \(rate >= 2_000_000 ? "met" : "NOT met")")
    }

    /// CPU time of the calling thread. The corresponding C function is `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`.
    static func threadCPUSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    static func seconds(_ duration: Duration) -> Double {
        let (whole, attoseconds) = duration.components
        return Double(whole) + Double(attoseconds) / 1e18
    }

    static func format(_ value: Double) -> String {
        if value >= 100 { return String(Int64(value.rounded())) }
        return String(Double(Int64(value * 1000)) / 1000)
    }
}
