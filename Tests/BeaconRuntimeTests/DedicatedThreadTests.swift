import BeaconRuntime
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct DedicatedThreadTests {
    /// The name the calling thread has in /proc/thread-self/comm.
    static func threadName() -> String {
        let descriptor = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return "" }
        var text = String(decoding: bytes[0..<count], as: UTF8.self)
        while text.last == "\n" { text.removeLast() }
        return text
    }

    @Test func runPerformsTheBodyOnANamedThreadOfItsOwnAndReturnsItsResult() async throws {
        let caller = pthread_self()
        let (thread, name, value) = try await DedicatedThread.run(name: "bb-test-run") {
            (pthread_self(), Self.threadName(), 6 * 7)
        }
        #expect(value == 42)
        #expect(thread != caller)
        #expect(name == "bb-test-run")
    }
}
