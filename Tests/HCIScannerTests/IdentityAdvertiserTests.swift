import BeaconFormats
import BeaconModel
import BeaconRooms
import Testing

@testable import HCIScanner

/// The identity beacon's advertising commands, byte for byte against the Core spec (Vol 4 Part E 7.8.5-7.8.9,
/// 7.8.53-7.8.56), and the order the scanner sends them in, on a fake controller.
@Suite struct IdentityAdvertiserTests {
    /// A controller that records every command and answers each with a Command Complete's parameters, or fails
    /// the opcodes it is told to.
    final class FakeController: HCICommandSender {
        var sent: [HCICommand] = []
        var failing: [UInt16: UInt8] = [:]
        var replies: [UInt16: [UInt8]] = [:]

        func send(_ command: HCICommand, timeout: Double) throws(HCIError) -> [UInt8] {
            sent.append(command)
            if let status = failing[command.opcode] {
                throw HCIError(kind: .commandFailed(status: status), adapter: "hci9", call: command.name)
            }
            return replies[command.opcode] ?? [0x00]
        }
    }

    static let data = AdvertisingParameters.iBeacon(
        uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0", major: 0x0102, minor: 0xA0B0, measuredPower: -59)!
    static let parameters = AdvertisingParameters(
        intervalUnits: AdvertisingParameters.units(milliseconds: 1000), data: data, txPower: -8)

    @Test func theIBeaconPayload() {
        #expect(
            Self.data == [
                0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
                0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                0x01, 0x02, 0xA0, 0xB0, 0xC5,
            ])
        #expect(AdvertisingParameters.iBeacon(uuid: "e2c56db5", major: 1, minor: 1, measuredPower: 0) == nil)
        #expect(
            AdvertisingParameters.iBeacon(
                uuid: String(repeating: "zz", count: 16), major: 1, minor: 1, measuredPower: 0) == nil)
    }

    @Test func aPeerDecodesItAsTheGatewaysIdentity() {
        // What a scanning gateway decodes from another gateway's identity beacon: the beacon id the calibration
        // recognises (`CalibrationSettings.beaconID(of:)`).
        let settings = CalibrationSettings()
        let (major, minor) = CalibrationSettings.identity(of: "gw-kitchen")
        let data = AdvertisingParameters.iBeacon(
            uuid: settings.uuid, major: major, minor: minor, measuredPower: CalibrationSettings.measuredPower)
        let report = AdvertisingReport(
            timestamp: 1, eventType: 0x03, isExtended: false, address: BluetoothAddress(rawValue: 0xA1),
            addressType: .publicDevice, rssi: -70, txPower: nil, data: data ?? [])
        let ids = BeaconDecoder().observations(of: report, includeDevices: false).map(\.beaconID)
        #expect(ids == [settings.beaconID(of: "gw-kitchen")])
        #expect(settings.identities(of: ["gw-kitchen", "gw-hall"])[ids.first ?? ""] == "gw-kitchen")
    }

    @Test func intervals() {
        #expect(AdvertisingParameters.units(milliseconds: 1000) == 1600)
        #expect(AdvertisingParameters.units(milliseconds: 20) == 0x20)
        #expect(AdvertisingParameters.units(milliseconds: 10) == 0x20)
        #expect(AdvertisingParameters.units(milliseconds: 10_240) == 0x4000)
        #expect(AdvertisingParameters.units(milliseconds: 1e9) == 0x4000)
        #expect(AdvertisingParameters.units(milliseconds: .nan) == 0x0800)
    }

    @Test func legacyCommandBytes() {
        #expect(
            HCICommand.leSetAdvertisingParameters(Self.parameters).packet == [
                0x01, 0x06, 0x20, 0x0F, 0x40, 0x06, 0x40, 0x06, 0x03, 0x00, 0x00,
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00,
            ])
        let data = HCICommand.leSetAdvertisingData(Self.data).packet
        #expect(data.prefix(5) == [0x01, 0x08, 0x20, 0x20, 0x1E])
        #expect(data.count == 4 + 32 && Array(data[5..<35]) == Self.data && data[35] == 0)
        #expect(HCICommand.leSetAdvertisingEnable(true).packet == [0x01, 0x0A, 0x20, 0x01, 0x01])
        #expect(HCICommand.leSetAdvertisingEnable(false).packet == [0x01, 0x0A, 0x20, 0x01, 0x00])
        #expect(HCICommand.leReadAdvertisingChannelTxPower.packet == [0x01, 0x07, 0x20, 0x00])
    }

    @Test func extendedCommandBytes() {
        #expect(
            HCICommand.leSetExtendedAdvertisingParameters(Self.parameters).packet == [
                0x01, 0x36, 0x20, 0x19,
                0x00, 0x10, 0x00,  // handle 0, properties: legacy ADV_NONCONN_IND
                0x40, 0x06, 0x00, 0x40, 0x06, 0x00,  // interval min, max: 1600 x 0.625 ms
                0x07, 0x00, 0x00,  // channels 37-39, public address, peer address type
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // peer address
                0x00, 0xF8, 0x01, 0x00, 0x01, 0x00, 0x00,  // filter, tx -8 dBm, LE 1M, skip, LE 1M, SID, no notify
            ])
        let data = HCICommand.leSetExtendedAdvertisingData(Self.data).packet
        #expect(data.prefix(8) == [0x01, 0x37, 0x20, 0x22, 0x00, 0x03, 0x01, 0x1E])
        #expect(Array(data.dropFirst(8)) == Self.data)
        #expect(
            HCICommand.leSetExtendedAdvertisingEnable(true).packet
                == [0x01, 0x39, 0x20, 0x06, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00])
        #expect(HCICommand.leSetExtendedAdvertisingEnable(true).name == "LE Set Extended Advertising Enable (0x2039)")
    }

    @Test func legacyOrderAndTheReportedPower() {
        let controller = FakeController()
        controller.replies[0x2007] = [0x00, 0xF6]
        #expect(IdentityAdvertiser.start(Self.parameters, extended: false, on: controller) == .started(txPower: -10))
        #expect(controller.sent.map(\.opcode) == [0x200A, 0x2006, 0x2008, 0x200A, 0x2007])
        #expect(controller.sent.first == .leSetAdvertisingEnable(false))
        #expect(controller.sent[3] == .leSetAdvertisingEnable(true))
        // No legacy command ever goes to an extended session, nor the other way round.
        #expect(controller.sent.allSatisfy { !(0x2036...0x2039).contains($0.opcode) })
    }

    @Test func extendedOrderAndTheSelectedPower() {
        let controller = FakeController()
        controller.replies[0x2036] = [0x00, 0xFA]
        #expect(IdentityAdvertiser.start(Self.parameters, extended: true, on: controller) == .started(txPower: -6))
        #expect(controller.sent.map(\.opcode) == [0x2039, 0x2036, 0x2037, 0x2039])
        #expect(controller.sent.allSatisfy { !(0x2006...0x200A).contains($0.opcode) })
    }

    @Test func aRefusedDisableIsFineARefusedStepFails() {
        let controller = FakeController()
        controller.failing[0x200A] = 0x0C  // Command Disallowed: not advertising yet; then enable refused too
        let outcome = IdentityAdvertiser.start(Self.parameters, extended: false, on: controller)
        guard case let .failed(error) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(error.kind == .commandFailed(status: 0x0C))
        #expect(controller.sent.map(\.opcode) == [0x200A, 0x2006, 0x2008, 0x200A])

        let data = FakeController()
        data.failing[0x2037] = 0x12
        #expect(IdentityAdvertiser.start(Self.parameters, extended: true, on: data) != .started(txPower: nil))
        // It stops at the failed step: nothing enabled after a refused payload.
        #expect(data.sent.map(\.opcode) == [0x2039, 0x2036, 0x2037])

        let quiet = FakeController()
        quiet.failing[0x2039] = 0x0C
        IdentityAdvertiser.stop(extended: true, on: quiet)
        #expect(quiet.sent == [.leSetExtendedAdvertisingEnable(false)])
    }
}
