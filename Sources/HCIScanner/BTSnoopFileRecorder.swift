import BeaconModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Records HCI traffic to a btsnoop file (version 1, datalink 1002 "HCI UART (H4)"), readable by
/// `btmon -r` and Wireshark: commands the scanner sends (flags 0x2) and events it reads (flags 0x3).
///
/// Sendable: the descriptor is only used under the lock. A write error stops the recording (reported once
/// through `failure`) and never the scan.
public final class BTSnoopFileRecorder: HCITrafficRecorder, Sendable {
    public let path: String
    private let writer = BTSnoopWriter(datalink: .hciUART)
    private struct State {
        var fd: Int32
        var failure: String?
        var records: UInt64 = 0
    }
    private let state: Mutex<State>

    /// Creates (truncates) the file and writes the btsnoop header.
    public init(path: String) throws {
        let fd = try CaptureFile.create(path: path)
        do {
            try CaptureFile.write(BTSnoopWriter(datalink: .hciUART).header(), to: fd, path: path)
        } catch {
            Glibc.close(fd)
            throw error
        }
        self.path = path
        self.state = Mutex(State(fd: fd))
    }

    deinit { close() }

    public func record(packet: [UInt8], received: Bool, timestamp: Timestamp) {
        let bytes = writer.record(
            payload: packet, flags: received ? 0x3 : 0x2, drops: 0,
            timestampMicros: BTSnoopTime.btsnoopMicros(fromUnixSeconds: timestamp))
        state.withLock { state in
            guard state.fd >= 0, state.failure == nil else { return }
            do throws(CaptureFile.Failure) {
                try CaptureFile.write(bytes, to: state.fd, path: path)
                state.records += 1
            } catch {
                state.failure = error.description
            }
        }
    }

    /// Records written so far.
    public var records: UInt64 { state.withLock { $0.records } }

    /// The write error that stopped the recording, if any.
    public var failure: String? { state.withLock { $0.failure } }

    /// Closes the file; later records are ignored.
    public func close() {
        state.withLock { state in
            if state.fd >= 0 { Glibc.close(state.fd) }
            state.fd = -1
        }
    }
}
