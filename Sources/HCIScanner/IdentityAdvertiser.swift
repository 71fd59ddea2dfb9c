import BeaconFormats

/// Sends HCI commands and waits for their reply: the raw HCI socket, or a test's fake controller.
protocol HCICommandSender: AnyObject {
    /// Returns the Command Complete's return parameters (status first); a non-zero status throws.
    func send(_ command: HCICommand, timeout: Double) throws(HCIError) -> [UInt8]
}

extension HCISocket: HCICommandSender {}

/// Starts the identity beacon (self-calibration, docs/rooms.md) on the scanner's socket, beside the scan: the
/// extended advertising commands when the session scans with extended commands (a controller refuses a mix of
/// legacy and extended commands), the legacy ones otherwise. Best effort: a failure is reported, the scan goes on.
enum IdentityAdvertiser {
    enum Outcome: Sendable, Equatable {
        /// Advertising; the transmit power the controller selected or reports (dBm), when it answered one.
        case started(txPower: Int8?)
        case failed(HCIError)
    }

    static func start(_ parameters: AdvertisingParameters, extended: Bool, on sender: some HCICommandSender)
        -> Outcome
    {
        let commands = HCICommand.advertisingSequence(parameters, extended: extended)
        // Disabling a set that is not advertising answers Command Disallowed: fine.
        _ = try? sender.send(commands[0], timeout: 2)
        var power: Int8?
        do throws(HCIError) {
            for command in commands.dropFirst() {
                let reply = try sender.send(command, timeout: 2)
                if command.opcode == 0x2036, reply.count >= 2 { power = Int8(bitPattern: reply[1]) }
            }
            if !extended, let reply = try? sender.send(.leReadAdvertisingChannelTxPower, timeout: 2), reply.count >= 2 {
                power = Int8(bitPattern: reply[1])
            }
            return .started(txPower: power)
        } catch {
            return .failed(error)
        }
    }

    /// Stops advertising; best effort (the adapter may be gone).
    static func stop(extended: Bool, on sender: some HCICommandSender) {
        _ = try? sender.send(
            extended ? .leSetExtendedAdvertisingEnable(false) : .leSetAdvertisingEnable(false), timeout: 2)
    }
}
