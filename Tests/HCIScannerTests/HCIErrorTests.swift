import BeaconFormats
import Testing

@testable import HCIScanner

#if canImport(Glibc)
import Glibc
#endif

@Suite struct HCIErrorTests {
    @Test func errnoMapsToKind() {
        #expect(HCIError.system(EAFNOSUPPORT, adapter: "hci0", call: "socket").kind == .bluetoothUnsupported)
        #expect(HCIError.system(EPERM, adapter: "hci0", call: "write").kind == .permissionDenied)
        #expect(HCIError.system(EACCES, adapter: "hci0", call: "write").kind == .permissionDenied)
        #expect(HCIError.system(ENODEV, adapter: "hci0", call: "bind").kind == .adapterAbsent)
        #expect(HCIError.system(ENETDOWN, adapter: "hci0", call: "write").kind == .adapterDown)
        #expect(HCIError.system(ERFKILL, adapter: "hci0", call: "ioctl(HCIDEVUP)").kind == .adapterDown)
        #expect(HCIError.system(EBUSY, adapter: "hci0", call: "bind").kind == .adapterBusy)
        #expect(HCIError.system(EIO, adapter: "hci0", call: "read").kind == .system)
    }

    @Test func messagesSayWhatToDo() {
        let unsupported = HCIError.system(EAFNOSUPPORT, adapter: "hci0", call: "socket(AF_BLUETOOTH, BTPROTO_HCI)")
        #expect(unsupported.description.contains("no Bluetooth support"))
        #expect(unsupported.description.contains("socket(AF_BLUETOOTH, BTPROTO_HCI)"))
        #expect(unsupported.description.contains("errno \(EAFNOSUPPORT)"))
        let permission = HCIError.system(EPERM, adapter: "hci1", call: "LE Set Scan Parameters (0x200B)")
        #expect(permission.description.contains("CAP_NET_RAW"))
        #expect(permission.description.contains("hci1"))
        let rfkill = HCIError(kind: .adapterDown, adapter: "hci0", call: "ioctl(HCIDEVUP)", errno: ERFKILL)
        #expect(rfkill.description.contains("rfkill"))
        let down = HCIError(kind: .adapterDown, adapter: "hci0", call: "ioctl(HCIDEVUP)", errno: EPERM)
        #expect(down.description.contains("hciconfig hci0 up"))
    }

    @Test func commandFailureCarriesTheStatus() {
        let error = HCIError(
            kind: .commandFailed(status: 0x0C), adapter: "hci0", call: HCICommand.leSetScanEnable(true).name)
        #expect(
            error.description == "Bluetooth adapter hci0 rejected LE Set Scan Enable (0x200C) with status 0x0C "
                + "(Command Disallowed)")
        #expect(error.errno == 0)
    }

    /// Against this machine's kernel: an adapter index nobody has is either "no Bluetooth in the kernel"
    /// (EAFNOSUPPORT) or "no such adapter" (ENODEV), never a crash or a different adapter.
    @Test func absentAdapterOnTheRealKernel() {
        #expect(throws: HCIError.self) { try HCIAdapter.resolve(.index(4000)) }
        do {
            _ = try HCIAdapter.resolve(.index(4000))
        } catch {
            #expect(error.kind == .bluetoothUnsupported || error.kind == .adapterAbsent)
            #expect(error.adapter == "hci4000")
        }
    }

    @Test func scannerStartFailsWithTheKernelsReason() async {
        var settings = ScannerSettings()
        settings.adapter = "hci4000"
        let scanner = HCIScanner(settings: settings)
        do {
            _ = try await scanner.events()
            Issue.record("hci4000 cannot exist")
        } catch let error as HCIError {
            #expect(error.kind == .bluetoothUnsupported || error.kind == .adapterAbsent)
            #expect(scanner.failure != nil)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}
