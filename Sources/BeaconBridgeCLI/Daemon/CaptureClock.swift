import Synchronization

/// The newest capture time seen, shared with the publisher in replay mode so that "how old is this
/// sighting" (outbox expiry) is measured in capture time, not against today's wall clock.
final class CaptureClock: Sendable {
    private let bits = Atomic<UInt64>(0)

    var now: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    func advance(to time: Double) {
        if time > now { bits.store(time.bitPattern, ordering: .relaxed) }
    }
}
