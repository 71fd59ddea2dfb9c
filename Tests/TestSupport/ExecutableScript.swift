import Foundation

/// Writes scripts that a test's child processes execute (fake tools on `PATH`).
public enum ExecutableScript {
    /// Writes `text` to `path` with mode 0755, through a close-on-exec descriptor of a temporary file in the same
    /// directory that is renamed into place.
    ///
    /// Why not `String.write(toFile:)` and `chmod`: Foundation's descriptor is not close-on-exec, so a child that
    /// another test spawned while it was open inherited it, and as long as that child lived the file was open for
    /// writing and could not be executed: the daemon's spawn of a fake `avahi-publish-service` failed with
    /// ETXTBSY ("Text file busy") once in a stressed run of ESPHomeAnnouncementDaemonTests.
    public static func write(_ text: String, to path: String) throws {
        let temporary = path + ".writing"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw TestFailure("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                close(fd)
                throw TestFailure("cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
            bytes = bytes.dropFirst(written)
        }
        fchmod(fd, 0o755)  // whatever the umask
        close(fd)
        guard rename(temporary, path) == 0 else {
            throw TestFailure("cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
    }
}
