/// Why a connection to the ESPHome native API server is closed. Every case is a reason to log; none is a
/// reason to stop the server or the daemon.
public enum ESPHomeProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A protobuf body that does not parse.
    case malformedMessage(String)
    /// Framing bytes that do not follow the protocol (wrong indicator, bad varint, empty frame).
    case malformedFrame(String)
    /// A frame larger than the server accepts.
    case oversizedFrame(Int)
    /// A message the connection's state does not allow yet (e.g. a subscription before Hello).
    case outOfOrder(String)
    /// The Noise handshake failed (wrong key, bad handshake message, or a client without encryption).
    case handshake(String)
    /// A transport frame that does not authenticate under the session's key.
    case decryptionFailed

    public var description: String {
        switch self {
        case let .malformedMessage(why): "malformed message: \(why)"
        case let .malformedFrame(why): "malformed frame: \(why)"
        case let .oversizedFrame(size): "oversized frame (\(size) bytes)"
        case let .outOfOrder(why): "out of order: \(why)"
        case let .handshake(why): "handshake failed: \(why)"
        case .decryptionFailed: "frame failed authentication"
        }
    }
}
