import BeaconCore
import Synchronization

/// Feeds the HCI events of a btsnoop capture, with the capture's timestamps, as fast as possible or paced at a
/// speed factor (1 = real time). Delivers the same events the live scanner does (LE Meta events); the stream
/// finishes at the end of the capture. A capture cut short delivers what precedes the damage and then
/// reports the damage through `failure`.
public final class ReplaySource: HCIEventSource, Sendable {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { "replay \(path): \(message)" }
    }

    public let path: String
    /// 0 as fast as possible; otherwise capture seconds per real second.
    public let speed: Double
    private let stopRequested = Atomic<Bool>(false)
    private let deliveredCount = Atomic<UInt64>(0)
    private let failureBox = Mutex<Failure?>(nil)

    public init(path: String, speed: Double = 0) {
        self.path = path
        self.speed = speed.isFinite && speed > 0 ? speed : 0
    }

    public var statistics: HCISourceStatistics { HCISourceStatistics(delivered: deliveredCount.load(ordering: .relaxed)) }
    public var failure: (any Error)? { failureBox.withLock { $0 } }
    public func stop() { stopRequested.store(true, ordering: .relaxed) }

    /// Reads and checks the capture; throws `Failure` when it cannot be read or is not btsnoop.
    public func events() async throws -> AsyncStream<CapturedHCIEvent> {
        let bytes: [UInt8]
        do { bytes = try CaptureFile.read(path: path) } catch {
            throw Failure(path: path, message: error.description)
        }
        let parsed: (datalink: BTSnoopDatalink, records: [BTSnoopRecord], error: DecodeError?)
        do { parsed = try BTSnoopReader.readAll(bytes) } catch {
            throw Failure(path: path, message: error.description)
        }
        if let damage = parsed.error {
            failureBox.withLock { $0 = Failure(path: path, message: damage.description) }
        }
        let events = parsed.records.compactMap { record -> CapturedHCIEvent? in
            guard let event = record.hciEvent(datalink: parsed.datalink), event.first == 0x3E else { return nil }
            return CapturedHCIEvent(timestamp: record.unixTime, bytes: Array(event))
        }
        return stream(of: events)
    }

    private func stream(of events: [CapturedHCIEvent]) -> AsyncStream<CapturedHCIEvent> {
        let cursor = ReplayCursor(events: events, speed: speed)
        return AsyncStream(unfolding: { [self] in
            guard !stopRequested.load(ordering: .relaxed), let (event, delay) = cursor.next() else { return nil }
            // Pace in slices so that stop() takes effect within 100 ms.
            var remaining = delay
            while remaining > .zero, !stopRequested.load(ordering: .relaxed) {
                let slice = min(remaining, Duration.milliseconds(100))
                try? await Task.sleep(for: slice)
                remaining -= slice
            }
            guard !stopRequested.load(ordering: .relaxed) else { return nil }
            deliveredCount.add(1, ordering: .relaxed)
            return event
        })
    }
}
