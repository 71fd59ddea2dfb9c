import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Delivers SIGTERM, SIGINT and SIGHUP as values through dispatch signal sources (the signals themselves are
/// ignored so the default action, termination, never runs). Keep the instance alive while it is needed.
final class SignalStream {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], queue: DispatchQueue = DispatchQueue(label: "beaconbridge.signals"),
         handler: @escaping @Sendable (Int32) -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    /// Cancels the sources and restores the default actions.
    func cancel() {
        for source in sources {
            source.cancel()
            signal(Int32(source.handle), SIG_DFL)
        }
    }
}
