/// Why some untrusted bytes could not be decoded, and where.
///
/// `offset` counts bytes from the start of the input handed to the decoder (for an HCI event: from its first
/// byte, the H4 indicator when present; for a btsnoop file: from the start of the file).
public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "at byte \(offset): \(reason)" }
}
