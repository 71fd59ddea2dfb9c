import BeaconRuntime
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ProcessSpawnTests {
    /// A descriptor opened without close-on-exec (as a library or another thread might, between its `open`
    /// and `fcntl`) is not inherited: the child's /proc/self/fd lists 0-2 (and what `ls` opens itself), never
    /// the parent's descriptor, which stays open in the parent.
    @Test func aChildInheritsOnlyTheStandardDescriptors() throws {
        let directory = TemporaryDirectory(prefix: "bb-spawn")
        let opened = open("/dev/null", O_RDONLY)
        try #require(opened >= 0)
        defer { close(opened) }
        // Well above anything the test runner holds, and not close-on-exec (F_DUPFD clears the flag).
        let leaked = fcntl(opened, F_DUPFD, 200)
        try #require(leaked >= 200)
        defer { close(leaked) }
        #expect(fcntl(leaked, F_GETFD) & FD_CLOEXEC == 0)

        let listing = directory.file("fds")
        let started = ProcessSpawn.start(
            "/bin/sh", arguments: ["-c", "ls /proc/self/fd"],
            actions: [
                .open(fd: 0, path: "/dev/null", flags: O_RDONLY),
                .open(fd: 1, path: listing, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600),
            ])
        let pid = try started.get()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        #expect(status == 0)

        let descriptors = try String(contentsOfFile: listing, encoding: .utf8).split(separator: "\n").compactMap {
            Int32($0)
        }
        #expect(descriptors.contains(0) && descriptors.contains(1) && descriptors.contains(2))
        #expect(!descriptors.contains(leaked))
        #expect(fcntl(leaked, F_GETFD) >= 0)
    }
}
