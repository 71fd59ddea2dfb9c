// libFuzzer entry point for the decoding core. Built by scripts/fuzz.sh against the core's modules, compiled with
// testing enabled by scripts/fuzz-core.sh, with `-sanitize=fuzzer,address`. Any trap, overflow or
// memory error is a finding; the decoders must only ever return values or throw.

@testable import BeaconConfigReading
@testable import BeaconFormats
@testable import BeaconModel
@testable import BeaconTracking
@testable import DeviceProtocols
@testable import SecureDFU

/// Layouts compiled from the built-in grammar strings, plus the user-style ones the tests use.
let fuzzLayouts: [BeaconLayout] = [
    "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24",
    "s:0-1=feaa,m:2-2=10,p:3-3:-41,i:4-20v",
    "m:0-1=9900,m:2-2=01,i:3-4l,i:5-10,p:11-12l:3,d:13-13,d:14-30v",
    "x,s:0-1=feaa,m:2-2=20,d:3-3,d:4-5,d:6-7,d:8-11,d:12-15",
].compactMap { try? BeaconLayout(name: "fuzz", layout: $0) }

/// Every registered format, with a BTHome bind key for the fuzz report's address (so the AES-CCM path runs too).
let fuzzKeys: SensorKeys = {
    var keys = SensorKeys()
    keys.addBTHomeKey(Array(0..<16), for: BluetoothAddress(rawValue: 0x0102_0304_0506))
    return keys
}()
let fuzzDecoder = BeaconDecoder(layouts: fuzzLayouts, keys: fuzzKeys)
/// The same formats without keys: encrypted BTHome frames are reported, not decrypted.
let fuzzPlainDecoder = BeaconDecoder()

/// Zip limits a fuzzed input of at most 512 bytes can exceed (entries, name bytes, an entry's and all entries' sizes)
/// and the seed packages (Tests/Fuzz/corpus/dfu-package-*) fit.
let fuzzZipLimits: ZipArchive.Limits = {
    var limits = ZipArchive.Limits()
    limits.maximumEntries = 3
    limits.maximumNameBytes = 13
    limits.maximumEntryBytes = 300
    limits.maximumTotalBytes = 400
    return limits
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var sink = 0

    // 1. The bytes as an HCI event (H4 detection included), every report decoded down to observations/JSON.
    var assembler = ExtendedReportAssembler(maxPending: 4, maxDataLength: 64)
    do {
        try HCIEventParser.forEachReport(in: bytes, timestamp: 1) { report in
            if let joined = assembler.add(report) { sink &+= consume(fuzzDecoder.decode(joined)) }
        }
    } catch {
        sink &+= error.offset
    }

    // 2. The bytes as AD structures of a report.
    let report = AdvertisingReport(
        timestamp: 0, eventType: 0x10, isExtended: false,
        address: BluetoothAddress(rawValue: 0x0102_0304_0506), addressType: .randomDevice,
        rssi: -60, txPower: nil, data: bytes)
    sink &+= consume(fuzzDecoder.decode(report))

    // 2b. The bytes as the body of each sensor format's AD structure (BTHome service data with and without a key,
    // Ruuvi and Govee manufacturer data), so the decoders see every length and value.
    let body = Array(bytes.prefix(250))
    for (type, prefix) in [(UInt8(0x16), [UInt8(0xD2), 0xFC]), (0xFF, [0x99, 0x04]), (0xFF, [0x88, 0xEC])] {
        let ad = [UInt8(body.count + 3), type] + prefix + body
        var sensorReport = report
        sensorReport.data = ad
        sink &+= consume(fuzzDecoder.decode(sensorReport))
        sink &+= fuzzPlainDecoder.decode(sensorReport).beacons.count
    }
    var guardState = EncryptedCounterGuard()
    for observation in fuzzDecoder.decode(report).observations(includeDevices: false)
    where !guardState.admit(observation) {
        sink &+= 1
    }

    // 3. The bytes as a layout string, matched against the bytes themselves when it parses.
    let text = String(decoding: bytes.prefix(160), as: UTF8.self)
    if let layout = try? BeaconLayout(name: "fuzzed", layout: text) {
        sink &+= layout.beacon(in: bytes, payload: 0..<bytes.count, address: report.address)?.identifiers.count ?? 0
    }
    let settings = FormatSettings(enabled: [text], layouts: [.init(name: text, layout: text)])
    sink &+= settings.validate().count

    // 4. The bytes as the body of a btsnoop file.
    let file =
        BTSnoopWriter(datalink: bytes.first.map { $0 & 1 == 0 ? .hciUART : .hciUnencapsulated } ?? .hciUART).header()
        + bytes
    if let capture = try? BTSnoopReader.readAll(file) {
        for record in capture.records.prefix(8) {
            if let event = record.hciEvent(datalink: capture.datalink),
                let reports = try? HCIEventParser.parse(Array(event))
            {
                sink &+= reports.count
            }
            sink &+= Int(record.unixTime.isFinite ? 1 : 0)
        }
    }

    // 5. The bytes as what an ESPHome API client sends (FuzzESPHome.swift).
    sink &+= fuzzESPHome(bytes)

    // 6. What a GATT peer or a user hands over (issue 31): an ATT PDU, a DFU package (.zip), a raw DEFLATE
    // stream, an init packet, and a GATT command's MQTT payload for each operation.
    if let pdu = try? ATTPDU.decode(bytes) { sink &+= String(describing: pdu).utf8.count }
    // A package is opened as the daemon opens one (`DFUPackage(zip:)`: the archive, one image, its problems), with
    // the daemon's limits and with limits small enough that a few hundred bytes reach every refusal.
    for limits in [ZipArchive.Limits(), fuzzZipLimits] {
        do throws(DFUError) {
            sink &+= try DFUPackage(zip: bytes, limits: limits).firmware.count
        } catch {
            sink &+= String(describing: error).utf8.count
        }
    }
    if let inflated = try? Inflate.decompress(bytes, limit: 1 << 16) { sink &+= inflated.count }
    if let command = DFUInitCommand(bytes) { sink &+= String(describing: command).utf8.count }
    for op in ["read", "write", "services", "subscribe", "info"] {
        if case .success = GATTCommandRequest.parse(op: op[...], payload: bytes) { sink &+= 1 }
    }
    return sink == Int.min ? 1 : 0
}

private func consume(_ decoded: DecodedAdvertisement) -> Int {
    var count = 0
    for observation in decoded.observations(includeDevices: true) {
        count &+= observation.beaconID.utf8.count &+ observation.fields.count
    }
    count &+= decoded.json().serialized.utf8.count
    let estimator = DistanceEstimator()
    if let rssi = decoded.report.rssi,
        let distance = estimator.distance(
            rssi: Double(rssi), measuredPower: decoded.beacons.first?.measuredPower, format: "fuzz")
    {
        count &+= distance.isFinite ? 1 : 0
    }
    return count
}
