import Foundation

/// What most daemon tests start with: a fresh directory, a real mosquitto on a free loopback port and a
/// subscriber recording `patterns`. `stop()` (deferred by the test) stops both and removes the directory.
public final class BrokerSite: @unchecked Sendable {
    public let directory: String
    public let broker: MosquittoProcess
    public let subscriber: TestSubscriber

    public init(prefix: String, patterns: [String] = ["beaconbridge/#"]) async throws {
        let directory = try TestDirectory.make(prefix: prefix)
        do {
            broker = try MosquittoProcess()
            try await broker.start()
            subscriber = try TestSubscriber(port: broker.port, patterns: patterns)
            try await subscriber.start()
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        self.directory = directory
    }

    public func stop() {
        Task { [subscriber] in await subscriber.stop() }
        broker.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
