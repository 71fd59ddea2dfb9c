import BeaconModel

/// What the proxy server reports to the daemon's log. Never carries a key, a password or advertisement data.
public enum ESPHomeProxyNotice: Sendable, Equatable {
    case listening(address: String, port: Int, encrypted: Bool)
    case clientConnected(peer: String, clients: Int)
    case clientRefused(peer: String, reason: String)
    /// `reason` nil: the client disconnected normally.
    case clientClosed(peer: String, clientInfo: String, reason: String?)
    case clientSubscribed(peer: String, clientInfo: String)
    /// A slow client's queue was full: the batch was dropped for it (counted; logged at most once a minute).
    case clientDropping(peer: String, droppedTotal: UInt64)
    case failed(String)
    /// Active connections: a client asked to connect to `device`; the link came up; it ended (`error` 0: asked
    /// for, else the ESP-IDF-style number the client got).
    case deviceConnecting(peer: String, device: String)
    case deviceConnected(peer: String, device: String, mtu: Int)
    case deviceDisconnected(peer: String, device: String, error: Int32)
    /// A connect to a device the configuration does not allow (`gatt.allowed_devices`).
    case deviceRefused(peer: String, device: String, reason: String)
}
