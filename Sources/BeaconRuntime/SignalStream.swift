import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Delivers signals (SIGTERM, SIGINT, SIGHUP) as values through dispatch signal sources (the signals themselves
/// are ignored so the default action, termination, never runs): the one signal scheme of every command (`run`,
/// `replay`, `scan`). Keep the instance alive while it is needed.
public final class SignalStream {
    private let sources: [any DispatchSourceSignal]

    public init(
        signals: [Int32], queue: DispatchQueue = DispatchQueue(label: "beaconbridge.signals"),
        handler: @escaping @Sendable (Int32) -> Void
    ) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    /// Cancels the sources and restores the default actions.
    public func cancel() {
        for source in sources {
            source.cancel()
            signal(Int32(source.handle), SIG_DFL)
        }
    }
}
