import BeaconRuntime
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct DescriptorWriterTests {
    /// Waits for `condition`, up to a generous deadline (the pool this polls on is shared with the whole suite;
    /// 30 s once ran out under `stress-ng`).
    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = SystemClock.monotonic() + 120
        while !condition() {
            guard SystemClock.monotonic() < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Everything readable from `fd` until end of file, read on a thread of its own.
    static func readAll(_ fd: Int32) async throws -> [UInt8] {
        try await DedicatedThread.run(name: "bb-test-read") {
            var all: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return all }
                all += buffer[0..<count]
            }
        }
    }

    /// stdout piped to a reader that does not read: the pipe fills, then the writer's queue (its capacity),
    /// and the writing task is suspended in `write` (no pool thread blocked) rather than anything dropped. Once
    /// the reader reads, every line arrives, in order, and `flush` returns once the last is written.
    @Test func aFullPipeSuspendsTheTaskAndLosesNothing() async throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let writer = DescriptorWriter(label: "bb-test-writer", capacity: 4_096)
        let lines = (0..<400).map { index in Array("line \(index) \(String(repeating: "x", count: 500))\n".utf8) }

        let producer = Task {
            for line in lines { await writer.write(line, to: writeEnd) }
            await writer.flush()
        }
        // The pipe (64 KiB) and the queue (4 KiB) hold about 140 of the 200 KB: the producer waits for room.
        #expect(await Self.eventually { writer.waitingWriters == 1 })

        let reader = Task { try await Self.readAll(readEnd) }
        await producer.value
        writer.writeBlocking(Array("last\n".utf8), to: writeEnd)
        writer.flushBlocking()
        close(writeEnd)
        let received = try await reader.value
        #expect(received == Array(lines.joined()) + Array("last\n".utf8))
        #expect(writer.waitingWriters == 0)
    }
}
