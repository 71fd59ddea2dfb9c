import Foundation

/// What the tests that fill a small file system need (DiskFullRecoveryTests, SequenceRestartTests): mounting
/// and unmounting a tmpfs through a command, and a ballast file that fills it.
public enum ScratchFileSystem {
    /// Writes zeros to `path` until the file system is full (bounded: at most 64 MiB); returns the bytes written.
    public static func fill(_ path: String) throws -> Int {
        // Close-on-exec: a child another test spawns meanwhile would otherwise inherit the descriptor and keep the
        // ballast's space allocated after it is removed (SequenceRestartTests' run 3 then found the disk still full).
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TestFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var total = 0
        for size in [65536, 4096, 512, 1] {
            let zeros = [UInt8](repeating: 0, count: size)
            while total < 64 << 20 {
                let written = zeros.withUnsafeBytes { write(fd, $0.baseAddress, size) }
                if written <= 0 { break }
                total += written
            }
        }
        return total
    }

    /// Runs a command to its end (waiting without blocking a thread); true when it exited 0.
    public static func run(_ executable: String, _ arguments: [String]) async -> Bool {
        guard let child = try? ChildProcess(executable, arguments) else { return false }
        guard await child.exited(within: 60) else {
            child.terminate(SIGKILL)
            return false
        }
        let status = child.wait()
        return status & 0x7f == 0 && (status >> 8) & 0xff == 0
    }
}
