import BeaconFormats
import Testing

/// Command packets byte for byte against the Core spec (Vol 4 Part E 7.8.10, 7.8.11, 7.8.64, 7.8.65, 7.4.2,
/// 7.8.3): H4 type 0x01, opcode little endian (OGF << 10 | OCF), parameter length, parameters.
@Suite struct HCICommandEncodingTests {
    @Test func leSetScanParametersActive100ms() {
        let command = HCICommand.leSetScanParameters(
            ScanParameters(active: true, intervalUnits: 0x00A0, windowUnits: 0x0050))
        #expect(command.packet == [0x01, 0x0B, 0x20, 0x07, 0x01, 0xA0, 0x00, 0x50, 0x00, 0x00, 0x00])
    }

    @Test func leSetScanParametersPassiveRandomAddressWhitelist() {
        let parameters = ScanParameters(
            active: false, intervalUnits: 0x4000, windowUnits: 0x0004, ownAddressType: 1,
            filterPolicy: 1)
        #expect(
            HCICommand.leSetScanParameters(parameters).packet
                == [0x01, 0x0B, 0x20, 0x07, 0x00, 0x00, 0x40, 0x04, 0x00, 0x01, 0x01])
    }

    @Test func leSetScanEnableWithoutDuplicateFilter() {
        #expect(HCICommand.leSetScanEnable(true).packet == [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])
        #expect(HCICommand.leSetScanEnable(false).packet == [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00])
        #expect(
            HCICommand.leSetScanEnable(true, filterDuplicates: true).packet == [0x01, 0x0C, 0x20, 0x02, 0x01, 0x01])
    }

    @Test func leSetExtendedScanParametersOnLE1M() {
        let command = HCICommand.leSetExtendedScanParameters(
            ScanParameters(
                active: true, intervalUnits: 0x0012,
                windowUnits: 0x0012))
        // own address type, filter policy, PHYs = LE 1M, then type, interval, window for that PHY.
        #expect(command.packet == [0x01, 0x41, 0x20, 0x08, 0x00, 0x00, 0x01, 0x01, 0x12, 0x00, 0x12, 0x00])
    }

    @Test func leSetExtendedScanEnableContinuous() {
        // enable, filter duplicates, duration 0 (until disabled), period 0 (continuous).
        #expect(
            HCICommand.leSetExtendedScanEnable(true).packet
                == [0x01, 0x42, 0x20, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(
            HCICommand.leSetExtendedScanEnable(false).packet
                == [0x01, 0x42, 0x20, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    @Test func capabilityQueries() {
        #expect(HCICommand.readLocalSupportedCommands.packet == [0x01, 0x02, 0x10, 0x00])
        #expect(HCICommand.leReadLocalSupportedFeatures.packet == [0x01, 0x03, 0x20, 0x00])
    }

    @Test func opcodeFields() {
        let command = HCICommand.leSetScanEnable(true)
        #expect(command.ogf == 0x08)
        #expect(command.ocf == 0x000C)
        #expect(command.name == "LE Set Scan Enable (0x200C)")
    }

    @Test(arguments: [(2.5, UInt16(4)), (100, 160), (10, 16), (10_240, 0x4000), (11.25, 18)])
    func millisecondsToUnits(milliseconds: Double, units: UInt16) {
        #expect(ScanParameters.units(milliseconds: milliseconds) == units)
    }

    @Test(arguments: [0, 2.1, 10_241, -5, Double.nan, Double.infinity])
    func millisecondsOutOfRange(milliseconds: Double) {
        #expect(ScanParameters.units(milliseconds: milliseconds) == nil)
    }
}

@Suite struct HCICommandReplyTests {
    @Test func commandCompleteOfScanEnable() {
        // Command Complete: 1 packet allowed, opcode 0x200C, status success.
        let reply = HCICommandReply(event: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
        #expect(reply == .complete(opcode: 0x200C, returnParameters: [0x00]))
        #expect(reply?.status == 0)
    }

    @Test func commandDisallowed() {
        let reply = HCICommandReply(event: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x0C])
        #expect(reply?.status == 0x0C)
        #expect(HCIStatus.name(0x0C) == "Command Disallowed")
    }

    @Test func commandStatus() {
        let reply = HCICommandReply(event: [0x0F, 0x04, 0x01, 0x01, 0x41, 0x20])
        #expect(reply == .status(opcode: 0x2041, status: 0x01))
    }

    @Test(arguments: [
        [UInt8](), [0x0E], [0x0E, 0x04, 0x01, 0x0C], [0x0E, 0x02, 0x01, 0x0C], [0x3E, 0x03, 0x02, 0x01, 0x00],
        [0x0F, 0x03, 0x00, 0x01, 0x0B],
    ])
    func rejectsTruncatedOrOtherEvents(bytes: [UInt8]) {
        #expect(HCICommandReply(event: bytes) == nil)
    }
}

@Suite struct ControllerCapabilitiesTests {
    private func commandsReply(octet37: UInt8) -> [UInt8] {
        var reply = [UInt8](repeating: 0, count: 65)
        reply[1 + 37] = octet37
        return reply
    }

    private func featuresReply(octet1: UInt8) -> [UInt8] { [0x00, 0x00, octet1, 0, 0, 0, 0, 0, 0] }

    @Test func extendedWhenBothCommandsAndTheFeature() {
        let capabilities = ControllerCapabilities(
            supportedCommandsReply: commandsReply(octet37: 0x60),
            leFeaturesReply: featuresReply(octet1: 0x10))
        #expect(capabilities.supportsExtendedScanning)
    }

    @Test func legacyWhenOnlyOneCommandOrNoFeature() {
        #expect(
            !ControllerCapabilities(
                supportedCommandsReply: commandsReply(octet37: 0x20),
                leFeaturesReply: featuresReply(octet1: 0x10)
            ).supportsExtendedScanning)
        #expect(
            !ControllerCapabilities(
                supportedCommandsReply: commandsReply(octet37: 0x60),
                leFeaturesReply: featuresReply(octet1: 0x00)
            ).supportsExtendedScanning)
    }

    @Test func legacyWhenRepliesFailedOrAreShort() {
        var failed = commandsReply(octet37: 0x60)
        failed[0] = 0x01
        #expect(
            !ControllerCapabilities(
                supportedCommandsReply: failed,
                leFeaturesReply: featuresReply(octet1: 0x10)
            ).supportsExtendedScanning)
        #expect(
            !ControllerCapabilities(
                supportedCommandsReply: [0x00, 0xFF],
                leFeaturesReply: featuresReply(octet1: 0x10)
            ).supportsExtendedScanning)
        #expect(!ControllerCapabilities(supportedCommandsReply: nil, leFeaturesReply: nil).supportsExtendedScanning)
    }
}
