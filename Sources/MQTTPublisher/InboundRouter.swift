import BeaconDelivery
import BeaconModel
import Synchronization

/// Hands messages on subscribed topics to every `EventPublisher.subscribe` stream whose filter matches.
/// Called on the transport's thread; only yields (never blocks).
final class InboundRouter: Sendable {
    private let routes = Mutex<[(filter: TopicFilter, continuation: AsyncStream<InboundMessage>.Continuation)]>([])

    func add(_ filter: TopicFilter, _ continuation: AsyncStream<InboundMessage>.Continuation) {
        routes.withLock { $0.append((filter, continuation)) }
    }

    func deliver(_ message: InboundMessage) {
        let targets = routes.withLock { routes in routes.filter { $0.filter.matches(message.topic) }.map(\.continuation)
        }
        for target in targets { target.yield(message) }
    }

    func finish() {
        let all = routes.withLock { routes in
            defer { routes.removeAll() }
            return routes.map(\.continuation)
        }
        for continuation in all { continuation.finish() }
    }
}
