import DeviceProtocols
import SecureDFU

extension TestGATTServer {
    /// A write to the DFU control point (answered by a notification when they are on, as a bootloader does) or
    /// to the packet characteristic (a receipt notification when one is due). Logs each Select's answer, each
    /// Execute's result and, once the whole image is in and checked, `dfu-complete crc=XXXXXXXX size=N ok`.
    mutating func dfuWrite(_ handle: UInt16, _ value: [UInt8], respond: Bool) -> [ATTPDU] {
        guard var target = dfuTarget else { return [] }
        defer { dfuTarget = target }
        var out: [ATTPDU] = respond ? [.writeResponse] : []
        let wasAccepted = target.imageAccepted
        let responses = handle == dfuControlPoint ? target.controlPoint(value) : target.packet(value)
        for response in responses {
            if handle == dfuControlPoint, let decoded = try? SecureDFUResponse.decode(response) {
                switch decoded.requestOpcode {
                case SecureDFUProtocol.select:
                    log.append(
                        "dfu select \(value.count > 1 && value[1] == 1 ? "command" : "data") offset=\(decoded.offset) "
                            + "crc=\(Self.hex32(decoded.crc))")
                case SecureDFUProtocol.execute, SecureDFUProtocol.create:
                    let name = decoded.requestOpcode == SecureDFUProtocol.create ? "create" : "execute"
                    log.append("dfu \(name) \(target.writing == .command ? "command" : "data") \(decoded.result)")
                default:
                    break
                }
            }
            if isSubscribed(dfuControlPoint) {
                out.append(.handleValueNotification(handle: dfuControlPoint, value: Array(response.prefix(mtu - 3))))
            }
        }
        if !wasAccepted, target.imageAccepted, let crc = target.acceptedCRC {
            log.append("dfu-complete crc=\(Self.hex32(crc)) size=\(target.data.count) ok")
        }
        return out
    }

    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}
