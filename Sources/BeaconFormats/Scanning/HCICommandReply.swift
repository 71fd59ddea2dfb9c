/// The controller's answer to a command: a Command Complete (0x0E) with return parameters, or a Command
/// Status (0x0F) with a status (Core spec Vol 4 Part E 7.7.14 and 7.7.15).
public enum HCICommandReply: Sendable, Equatable {
    /// Return parameters start with the status byte for every command the scanner sends.
    case complete(opcode: UInt16, returnParameters: [UInt8])
    case status(opcode: UInt16, status: UInt8)

    /// Parses an event (event code first); nil for other events or truncated ones.
    public init?(event bytes: [UInt8]) {
        guard bytes.count >= 2 else { return nil }
        let length = Int(bytes[1])
        guard bytes.count >= 2 + length else { return nil }
        switch bytes[0] {
        case 0x0E:
            guard length >= 3 else { return nil }
            let opcode = UInt16(bytes[3]) | UInt16(bytes[4]) << 8
            self = .complete(opcode: opcode, returnParameters: Array(bytes[5..<(2 + length)]))
        case 0x0F:
            guard length >= 4 else { return nil }
            let opcode = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
            self = .status(opcode: opcode, status: bytes[2])
        default:
            return nil
        }
    }

    public var opcode: UInt16 {
        switch self {
        case let .complete(opcode, _), let .status(opcode, _): opcode
        }
    }

    /// The status byte: the first return parameter (0x00 success), or the Command Status status.
    /// nil when a Command Complete carries no return parameters.
    public var status: UInt8? {
        switch self {
        case let .complete(_, parameters): parameters.first
        case let .status(_, status): status
        }
    }
}
