import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Writes to file descriptors (a command's stdout and stderr) from a serial dispatch queue of its own, in the
/// order the writes were queued, so a write that blocks (stdout piped to a slow reader, a full pipe) blocks
/// that queue's thread, never a thread of the cooperative pool.
///
/// Bounded: at most `capacity` bytes wait (plus one write's bytes). When they do, a task's `write` suspends
/// until the queue has written some (back-pressure: nothing is dropped), and `writeBlocking` (for threads that
/// may block: a command's main thread) waits for the queue to empty. `flush` returns once everything queued
/// before it is written: a command's last lines are out before the process exits. Write errors are ignored
/// (there is nowhere left to report them); EINTR and short writes are continued (`FileDescriptorWrite.all`).
public final class DescriptorWriter: Sendable {
    private struct Chunk {
        var fd: Int32
        var bytes: [UInt8]
    }
    private struct State {
        var chunks: [Chunk] = []
        /// Bytes queued and not yet written (those being written included).
        var pending = 0
        /// A drain block is queued or running; it runs until `chunks` is empty.
        var draining = false
        /// Tasks waiting for `pending` to fall below `capacity`.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    public let capacity: Int
    private let queue: DispatchQueue
    private let state = Mutex(State())

    public init(label: String, capacity: Int = 65_536) {
        self.queue = DispatchQueue(label: label)
        self.capacity = max(1, capacity)
    }

    /// Queues `bytes` for `fd` once fewer than `capacity` bytes wait; suspends the task until then.
    public func write(_ bytes: [UInt8], to fd: Int32) async {
        while !tryQueue(bytes, to: fd) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard state.pending >= capacity else { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// Queues `bytes` for `fd`; when `capacity` bytes wait, first waits (blocking the calling thread) for the
    /// queue to write them. For threads that may block; a task uses `write(_:to:)`.
    public func writeBlocking(_ bytes: [UInt8], to fd: Int32) {
        while !tryQueue(bytes, to: fd) { queue.sync {} }
    }

    /// Returns once everything queued before the call is written (blocks the calling thread).
    public func flushBlocking() { queue.sync {} }

    /// Resumes once everything queued before the call is written.
    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }

    /// Tasks waiting in `write` for room (for tests).
    public var waitingWriters: Int { state.withLock { $0.waiters.count } }

    private func tryQueue(_ bytes: [UInt8], to fd: Int32) -> Bool {
        guard !bytes.isEmpty else { return true }
        let start = state.withLock { state -> Bool? in
            guard state.pending < capacity else { return nil }
            state.chunks.append(Chunk(fd: fd, bytes: bytes))
            state.pending += bytes.count
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        guard let start else { return false }
        if start { queue.async { self.drain() } }
        return true
    }

    /// On `queue`: writes what waits, consecutive chunks for one descriptor in one `write`, until nothing does.
    private func drain() {
        while true {
            let chunks = state.withLock { state -> [Chunk]? in
                guard !state.chunks.isEmpty else {
                    state.draining = false
                    return nil
                }
                defer { state.chunks.removeAll(keepingCapacity: true) }
                return state.chunks
            }
            guard let chunks else { return }
            var index = 0
            while index < chunks.count {
                var bytes = chunks[index].bytes
                var next = index + 1
                while next < chunks.count, chunks[next].fd == chunks[index].fd {
                    bytes += chunks[next].bytes
                    next += 1
                }
                _ = FileDescriptorWrite.all(chunks[index].fd, bytes)
                let written = bytes.count
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.pending -= written
                    guard state.pending < capacity else { return [] }
                    defer { state.waiters.removeAll() }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
                index = next
            }
        }
    }
}
