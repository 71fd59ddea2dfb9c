/// Names of the HCI error codes a scanner meets (Core spec Vol 1 Part F).
public enum HCIStatus {
    public static func name(_ code: UInt8) -> String {
        switch code {
        case 0x00: "Success"
        case 0x01: "Unknown HCI Command"
        case 0x03: "Hardware Failure"
        case 0x0C: "Command Disallowed"
        case 0x0D: "Connection Rejected due to Limited Resources"
        case 0x11: "Unsupported Feature or Parameter Value"
        case 0x12: "Invalid HCI Command Parameters"
        case 0x1F: "Unspecified Error"
        case 0x3A: "Controller Busy"
        default: "error"
        }
    }
}
