import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A long-running part of a command (a source, the publisher, a loop) under a `ServiceGroup`.
public protocol Service: AnyObject, Sendable {
    /// For the group's answer (`ServiceGroup.Reason.finished`) and logs.
    var name: String { get }
    /// Runs until its work is done or `stop()` was called.
    func run() async
    /// Asks `run()` to return; may come before `run()` started and more than once.
    func stop() async
}

/// Runs services side by side and stops them in reverse order: the one lifecycle and signal scheme of the
/// commands (issue 15, "one small runtime module").
///
/// `run()` starts every service's `run()` on a child task, in the order given, then waits for the first of:
/// a stop signal (SIGTERM, SIGINT by default), the end of a service's `run()` (a source that finished, say).
/// Then it stops the services from the last to the first: each `stop()` is awaited and so is the end of that
/// service's `run()` before the next one is stopped, so a service can rely on the ones before it (started
/// earlier) while it winds down. Other signals (`otherSignals`, e.g. SIGHUP for a reload) go to `onSignal`
/// and stop nothing. `onStop` hears why the group stops, once, before the first service is stopped (the
/// daemon's loop logs the signal). A stop signal that arrives while the services are being stopped (a service
/// manager's stop during a long wind-down, such as a replay waiting for delivery) goes to
/// `onStopSignalWhileStopping`, so a service can cut its wind-down short. Signals are received once, for the
/// whole group, through `SignalStream` (or an injected source in tests); nobody blocks: waiting is suspended
/// tasks.
public final class ServiceGroup: Sendable {
    /// Why the group stopped.
    public enum Reason: Sendable, Equatable {
        case signal(Int32)
        /// The `run()` of the service with this name returned by itself.
        case finished(String)
    }

    /// Installs a handler for signal numbers; returns what undoes it.
    public typealias SignalInstaller =
        @Sendable (_ signals: [Int32], _ handler: @escaping @Sendable (Int32) -> Void) -> @Sendable () -> Void

    /// The process's signals through dispatch signal sources (`SignalStream`).
    public static let processSignals: SignalInstaller = { signals, handler in
        let installed = InstalledSignals(SignalStream(signals: signals, handler: handler))
        return { installed.cancel() }
    }

    /// Signal sources until cancelled (once).
    final class InstalledSignals: Sendable {
        private let stream: Mutex<SignalStream?>

        init(_ stream: sending SignalStream) { self.stream = Mutex(stream) }

        func cancel() {
            stream.withLock { stream in
                stream?.cancel()
                stream = nil
            }
        }
    }

    let services: [any Service]
    let stopSignals: [Int32]
    let otherSignals: [Int32]
    let onSignal: @Sendable (Int32) -> Void
    let onStop: @Sendable (Reason) -> Void
    let onStopSignalWhileStopping: @Sendable (Int32) -> Void
    let installSignals: SignalInstaller

    public init(
        _ services: [any Service], stopSignals: [Int32] = [SIGTERM, SIGINT], otherSignals: [Int32] = [],
        onSignal: @escaping @Sendable (Int32) -> Void = { _ in },
        onStop: @escaping @Sendable (Reason) -> Void = { _ in },
        onStopSignalWhileStopping: @escaping @Sendable (Int32) -> Void = { _ in },
        installSignals: @escaping SignalInstaller = ServiceGroup.processSignals
    ) {
        self.services = services
        self.stopSignals = stopSignals
        self.otherSignals = otherSignals
        self.onSignal = onSignal
        self.onStop = onStop
        self.onStopSignalWhileStopping = onStopSignalWhileStopping
        self.installSignals = installSignals
    }

    /// Runs the services until a stop signal or the end of one of them, then stops them all in reverse order;
    /// returns why it stopped once every `run()` has returned.
    public func run() async -> Reason {
        // Unbounded: at most one element per service and per signal received, and a signal must not be lost
        // behind a service's end while the group is stopping.
        let (reasons, reasonSink) = AsyncStream.makeStream(of: Reason.self, bufferingPolicy: .unbounded)
        let stops = Set(stopSignals)
        let forward = onSignal
        let uninstall = installSignals(stopSignals + otherSignals) { number in
            if stops.contains(number) { reasonSink.yield(.signal(number)) } else { forward(number) }
        }
        defer { uninstall() }
        let ends = services.map { _ in Latch<Void>() }
        return await withTaskGroup(of: Void.self) { group in
            for (service, end) in zip(services, ends) {
                group.addTask {
                    await service.run()
                    end.open()
                    reasonSink.yield(.finished(service.name))
                }
            }
            // One reader of the reasons for the group's whole life: the first is why the group stops; stop
            // signals after it go to `onStopSignalWhileStopping` (the ends of services are not news by then).
            let first = Latch<Reason>()
            let (stopping, hurry) = (onStop, onStopSignalWhileStopping)
            group.addTask {
                for await reason in reasons {
                    if first.value == nil {
                        stopping(reason)
                        first.open(reason)
                    } else if case let .signal(number) = reason {
                        hurry(number)
                    }
                }
            }
            let reason = await first.wait() ?? .finished("")
            for (service, end) in zip(services, ends).reversed() {
                await service.stop()
                _ = await end.wait()
            }
            reasonSink.finish()
            await group.waitForAll()
            return reason
        }
    }
}
