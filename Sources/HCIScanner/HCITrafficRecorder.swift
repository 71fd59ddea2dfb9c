import BeaconModel

/// Receives what the scanner sends and reads, for a btsnoop recording. Called on the reading thread.
public protocol HCITrafficRecorder: Sendable {
    /// `packet` starts with the H4 packet type byte; `received` is false for commands the scanner sent.
    func record(packet: [UInt8], received: Bool, timestamp: Timestamp)
    /// Called once when the scanner stops; later records are ignored.
    func close()
}
