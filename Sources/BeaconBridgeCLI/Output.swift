import BeaconRuntime

/// The commands' stdout and stderr, without Foundation: every line goes through one `DescriptorWriter` (its own
/// serial queue, at most 64 KiB waiting), in the order written, both streams in one queue so their lines
/// interleave as they were written.
///
/// A task prints with `line(_:to:)`, which suspends while the queue is full (stdout piped to a slow reader) and
/// never blocks its pool thread. `stdout`/`stderr` are for the main thread of a command (and the occasional
/// message of a task): they queue and return, and wait only when 64 KiB are already waiting.
/// `CommandLineTool.main` flushes before the process exits.
public enum Output {
    static let writer = DescriptorWriter(label: "beaconbridge.output")

    public static func stdout(_ text: String) { write(text + "\n", to: 1) }
    public static func stderr(_ text: String) { write(text + "\n", to: 2) }

    /// Queues `text` for `fd` (1 or 2). A failed write is ignored: there is nowhere left to report it.
    public static func write(_ text: String, to fd: Int32) { writer.writeBlocking(Array(text.utf8), to: fd) }

    /// From a task: `text` and a newline to `fd` (1 or 2), suspending while the queue is full.
    public static func line(_ text: String, to fd: Int32 = 1) async {
        await writer.write(Array((text + "\n").utf8), to: fd)
    }

    /// Returns once everything written so far is out (before the process exits).
    public static func flush() { writer.flushBlocking() }
}
