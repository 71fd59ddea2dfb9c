// beaconbridge-testpeer: the GATT peripheral of the QEMU stage's `gatt` scenario (test-only, never packaged).
// Listens for LE connections on the ATT channel of an adapter (advertising is the scenario's job: hcitool
// commands in guest.sh), serves `TestGATTServer`'s database to each connection in turn, and prints one line
// per event. Exits after --connections connections ended or --seconds passed (a hang guard), 64 on a usage
// error, 69 when the adapter or the socket cannot be used.
// --dfu adds a Secure DFU target (service 0xFE59, `TestDFUTarget`) whose objects survive reconnects (resume);
// it prints `dfu-complete crc=XXXXXXXX size=N ok` once the whole image is in and checked (against
// --dfu-expect-crc HEX when given, else the init packet's announced size only). --dfu-drop-after N closes the
// connection once, after N image bytes arrived, to show a resumed transfer.
// --write-package PATH [--image-bytes N] [--package-version V] writes an nRF Util package (stored entries: the
// manifest, an init packet from `TestInitPacket`, an image of N reproducible bytes), prints
// `package PATH size=N crc=XXXXXXXX version=V` and exits: the scenario's guest has no Python to make one.
import BeaconFormats
import BeaconRuntime
import GATTLink
import GATTTestPeer
import HCIScanner
import SecureDFU

#if canImport(Glibc)
import Glibc
#endif

/// One line to stdout, written at once (the console log interleaves it with the other programs' lines).
func say(_ text: String) {
    let line = Array("testpeer: \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

var adapterName = "hci1"
var firmware = "1.2.3-e2e"
var battery: UInt8 = 87
var connections = 1
var seconds = 120.0
var dfu = false
var dfuExpectedCRC: UInt32?
var dfuDropAfter: Int?
var packagePath: String?
var imageBytes = 12_288
var packageVersion: UInt32 = 2
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    if flag == "--dfu" {
        dfu = true
        continue
    }
    guard let value = arguments.first else {
        say(
            "\(flag) needs a value (usage: --adapter hci1 --firmware TEXT --battery N --connections N --seconds S"
                + " --dfu --dfu-expect-crc HEX --dfu-drop-after N)")
        exit(64)
    }
    arguments.removeFirst()
    switch flag {
    case "--adapter": adapterName = value
    case "--firmware": firmware = value
    case "--battery": if let number = UInt8(value) { battery = number } else { exit(64) }
    case "--connections": if let number = Int(value), number > 0 { connections = number } else { exit(64) }
    case "--seconds": if let number = Double(value), number > 0 { seconds = number } else { exit(64) }
    case "--dfu-expect-crc": if let number = UInt32(value, radix: 16) { dfuExpectedCRC = number } else { exit(64) }
    case "--dfu-drop-after": if let number = Int(value), number > 0 { dfuDropAfter = number } else { exit(64) }
    case "--write-package": packagePath = value
    case "--image-bytes":
        if let number = Int(value), number > 0, number <= 1_048_576 { imageBytes = number } else { exit(64) }
    case "--package-version": if let number = UInt32(value) { packageVersion = number } else { exit(64) }
    default:
        say("unknown option \(flag)")
        exit(64)
    }
}

if let path = packagePath {
    let image = (0..<imageBytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ 7) }
    let zip = TestZipFile.storedDFUPackage(
        initPacket: TestInitPacket.bytes(version: packageVersion, applicationSize: image.count), firmware: image)
    guard let file = fopen(path, "wb"), fwrite(zip, 1, zip.count, file) == zip.count, fclose(file) == 0 else {
        say("cannot write \(path)")
        exit(73)
    }
    let crc = String(CRC32.checksum(image), radix: 16)
    say(
        "package \(path) size=\(image.count) crc=\(String(repeating: "0", count: 8 - crc.count) + crc) version=\(packageVersion)"
    )
    exit(0)
}

guard let selector = AdapterSelector(configValue: adapterName) else {
    say("bad adapter \(adapterName)")
    exit(64)
}
let listener: L2CAPSocket
do {
    let adapter = try HCIAdapter.resolve(selector)
    listener = try L2CAPSocket.listen(on: adapter.address, adapterName: adapter.name)
    say("listening on \(adapter.name) \(adapter.address) ATT channel")
} catch {
    say("cannot listen: \(error)")
    exit(69)
}

let deadline = SystemClock.monotonic() + seconds
var served = 0
/// The DFU target's state, kept across connections so a dropped transfer resumes.
var dfuTarget = dfu ? TestDFUTarget(expectedCRC: dfuExpectedCRC) : nil
var dropped = false
while served < connections, SystemClock.monotonic() < deadline {
    let accepted: L2CAPSocket?
    do { accepted = try listener.accept(timeoutMilliseconds: 500) } catch {
        say("accept failed: \(error)")
        exit(69)
    }
    guard let link = accepted else { continue }
    served += 1
    say("connected \(link.peer)")
    var server = TestGATTServer(firmware: firmware, battery: battery, dfuTarget: dfuTarget)
    var logged = 0
    serving: while SystemClock.monotonic() < deadline {
        switch link.receive(timeoutMilliseconds: 500) {
        case .timeout: continue
        case .closed(let code):
            say("disconnected \(link.peer)" + (code != 0 ? " (errno \(code))" : ""))
            break serving
        case .pdu(let bytes):
            for reply in server.handle(bytes) {
                if let code = link.send(reply.encode()) { say("send failed: errno \(code)") }
            }
            for line in server.log.dropFirst(logged) { say(line) }
            logged = server.log.count
            if let limit = dfuDropAfter, !dropped, let received = server.dfuTarget?.dataBytesReceived, received >= limit
            {
                dropped = true
                say("dfu dropping the connection after \(received) image bytes")
                break serving
            }
        }
    }
    link.close()
    dfuTarget = server.dfuTarget
}
say("done after \(served) connection(s)")
exit(0)
