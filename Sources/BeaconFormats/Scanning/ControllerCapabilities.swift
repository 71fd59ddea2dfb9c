/// What the controller says it supports, from Read Local Supported Commands and LE Read Local Supported
/// Features, as far as the scanner cares.
public struct ControllerCapabilities: Sendable, Equatable {
    /// LE Set Extended Scan Parameters and LE Set Extended Scan Enable are both supported commands.
    public var extendedScanCommands: Bool
    /// LE feature bit 12, "LE Extended Advertising".
    public var extendedAdvertisingFeature: Bool

    public init(extendedScanCommands: Bool, extendedAdvertisingFeature: Bool) {
        self.extendedScanCommands = extendedScanCommands
        self.extendedAdvertisingFeature = extendedAdvertisingFeature
    }

    /// Parses the return parameters (status byte first) of Read Local Supported Commands and, when the
    /// controller answered it, LE Read Local Supported Features. Short or failed replies count as "not
    /// supported" (the legacy commands are always the safe choice).
    public init(supportedCommandsReply: [UInt8]?, leFeaturesReply: [UInt8]?) {
        // Supported commands: octet 37, bit 5 = LE Set Extended Scan Parameters, bit 6 = ... Enable.
        if let reply = supportedCommandsReply, reply.count >= 1 + 64, reply[0] == 0 {
            let octet37 = reply[1 + 37]
            extendedScanCommands = octet37 & 0x20 != 0 && octet37 & 0x40 != 0
        } else {
            extendedScanCommands = false
        }
        // LE features: bit 12 = octet 1, bit 4.
        if let reply = leFeaturesReply, reply.count >= 1 + 8, reply[0] == 0 {
            extendedAdvertisingFeature = reply[1 + 1] & 0x10 != 0
        } else {
            extendedAdvertisingFeature = false
        }
    }

    /// True when extended scanning can be used.
    public var supportsExtendedScanning: Bool { extendedScanCommands && extendedAdvertisingFeature }
}
