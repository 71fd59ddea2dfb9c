/// An HCI command packet (Core spec Vol 4 Part E 5.4.1): opcode (OGF << 10 | OCF, little endian), parameter
/// length, parameters. `packet` is what goes on a raw HCI socket, H4 packet type 0x01 first.
public struct HCICommand: Sendable, Equatable {
    public var opcode: UInt16
    public var parameters: [UInt8]

    public init(opcode: UInt16, parameters: [UInt8] = []) {
        precondition(parameters.count <= 255, "HCI command parameters are at most 255 bytes")
        self.opcode = opcode
        self.parameters = parameters
    }

    public init(ogf: UInt8, ocf: UInt16, parameters: [UInt8] = []) {
        self.init(opcode: UInt16(ogf) << 10 | (ocf & 0x03FF), parameters: parameters)
    }

    public var ogf: UInt8 { UInt8(opcode >> 10) }
    public var ocf: UInt16 { opcode & 0x03FF }

    /// H4 type 0x01, opcode (LE), length, parameters.
    public var packet: [UInt8] {
        [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters
    }

    /// A short name for logs and errors, e.g. "LE Set Scan Enable (0x200C)".
    public var name: String {
        let hex = String(opcode, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return "\(HCICommand.names[opcode] ?? "HCI command") (0x\(padded))"
    }

    package static let names: [UInt16: String] = [
        0x0C03: "Reset",
        0x1001: "Read Local Version Information",
        0x1002: "Read Local Supported Commands",
        0x2003: "LE Read Local Supported Features",
        0x2006: "LE Set Advertising Parameters",
        0x2007: "LE Read Advertising Physical Channel Tx Power",
        0x2008: "LE Set Advertising Data",
        0x200A: "LE Set Advertising Enable",
        0x2036: "LE Set Extended Advertising Parameters",
        0x2037: "LE Set Extended Advertising Data",
        0x2039: "LE Set Extended Advertising Enable",
        0x200B: "LE Set Scan Parameters",
        0x200C: "LE Set Scan Enable",
        0x2041: "LE Set Extended Scan Parameters",
        0x2042: "LE Set Extended Scan Enable",
    ]
}

/// Builders for the commands the scanner sends (Core spec 5.x, Vol 4 Part E 7.8).
extension HCICommand {
    /// Read Local Supported Commands (OGF 0x04, OCF 0x0002): returns status + 64-octet bit mask.
    public static let readLocalSupportedCommands = HCICommand(ogf: 0x04, ocf: 0x0002)

    /// LE Read Local Supported Features (OGF 0x08, OCF 0x0003): returns status + 8-octet feature mask.
    public static let leReadLocalSupportedFeatures = HCICommand(ogf: 0x08, ocf: 0x0003)

    /// LE Set Scan Parameters (0x200B): type (0 passive, 1 active), interval, window (units of 0.625 ms),
    /// own address type, filter policy.
    public static func leSetScanParameters(_ parameters: ScanParameters) -> HCICommand {
        var bytes: [UInt8] = [parameters.active ? 0x01 : 0x00]
        bytes += littleEndian(parameters.intervalUnits) + littleEndian(parameters.windowUnits)
        bytes += [parameters.ownAddressType, parameters.filterPolicy]
        return HCICommand(ogf: 0x08, ocf: 0x000B, parameters: bytes)
    }

    /// LE Set Scan Enable (0x200C): enable, filter duplicates.
    public static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool = false) -> HCICommand {
        HCICommand(ogf: 0x08, ocf: 0x000C, parameters: [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00])
    }

    /// LE Set Extended Scan Parameters (0x2041): own address type, filter policy, scanning PHYs (bit 0 LE 1M),
    /// then for each PHY set: type, interval, window. The scanner scans the LE 1M PHY only, where every
    /// beacon advertises its primary channel PDUs.
    public static func leSetExtendedScanParameters(_ parameters: ScanParameters) -> HCICommand {
        var bytes: [UInt8] = [parameters.ownAddressType, parameters.filterPolicy, 0x01]
        bytes.append(parameters.active ? 0x01 : 0x00)
        bytes += littleEndian(parameters.intervalUnits) + littleEndian(parameters.windowUnits)
        return HCICommand(ogf: 0x08, ocf: 0x0041, parameters: bytes)
    }

    /// LE Set Extended Scan Enable (0x2042): enable, filter duplicates, duration (0 = until disabled),
    /// period (0 = continuous).
    public static func leSetExtendedScanEnable(_ enable: Bool, filterDuplicates: Bool = false) -> HCICommand {
        HCICommand(
            ogf: 0x08, ocf: 0x0042,
            parameters: [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    private static func littleEndian(_ value: UInt16) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8)]
    }
}
