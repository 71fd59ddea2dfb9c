import Testing

@testable import BeaconModel
@testable import DeviceProtocols

/// The `dfu` command and naming a configured device with `device` (issue 31, DFU from the daemon): a package is
/// a bare file name only, `force` and `package` belong to `dfu`, `address` and `device` exclude each other.
@Suite struct GATTDFURequestTests {
    let devices = [
        GATTSettings.Device(
            address: BluetoothAddress(string: "AA:BB:CC:DD:EE:01")!, random: true, name: "front-tag",
            firmware: "/var/lib/beaconbridge/firmware/tag-2.zip")
    ]

    func parse(_ op: String, _ payload: String) -> Result<GATTCommandRequest, GATTCommandFailure> {
        GATTCommandRequest.parse(op: Substring(op), payload: Array(payload.utf8), devices: devices)
    }

    @Test func dfuByDeviceOrAddress() throws {
        let byName = try parse("dfu", #"{"id":"u1","device":"front-tag"}"#).get()
        #expect(byName.operation == .dfu && byName.device == "front-tag" && byName.random && !byName.force)
        #expect(byName.address == BluetoothAddress(string: "AA:BB:CC:DD:EE:01") && byName.package == nil)
        let byAddress = try parse(
            "dfu", #"{"id":"u2","address":"aa:bb:cc:dd:ee:01","package":"tag-3.zip","force":true}"#
        ).get()
        #expect(byAddress.device == "front-tag" && byAddress.package == "tag-3.zip" && byAddress.force)
        let other = try parse("dfu", #"{"id":"u3","address":"AA:BB:CC:DD:EE:09"}"#).get()
        #expect(other.device == nil)
        let read = try parse("read", #"{"id":"r","device":"front-tag","uuid":"2a19"}"#).get()
        #expect(read.address == byName.address && read.random)
    }

    @Test(arguments: [
        (#"{"id":"u","device":"nobody"}"#, "device"),
        (#"{"id":"u","device":7}"#, "device"),
        (#"{"id":"u","device":"front-tag","address":"AA:BB:CC:DD:EE:01"}"#, "device"),
        (#"{"id":"u"}"#, "address"),
        (#"{"id":"u","device":"front-tag","package":"../etc/passwd"}"#, "package"),
        (#"{"id":"u","device":"front-tag","package":"/etc/passwd"}"#, "package"),
        (#"{"id":"u","device":"front-tag","package":".hidden.zip"}"#, "package"),
        (#"{"id":"u","device":"front-tag","package":""}"#, "package"),
        (#"{"id":"u","device":"front-tag","package":"a b.zip"}"#, "package"),
        (#"{"id":"u","device":"front-tag","package":7}"#, "package"),
        (#"{"id":"u","device":"front-tag","force":"yes"}"#, "force"),
    ])
    func badDFURequestsNameTheirField(payload: String, step: String) {
        guard case .failure(let failure) = parse("dfu", payload) else {
            Issue.record("accepted: \(payload)")
            return
        }
        #expect(failure.error.kind == "bad_request" && failure.error.step == step, "\(payload): \(failure.error)")
        #expect(failure.id == "u")
    }

    @Test func packageAndForceOnlyForDFU() {
        for payload in [
            #"{"id":"r","device":"front-tag","uuid":"2a19","force":true}"#,
            #"{"id":"r","device":"front-tag","uuid":"2a19","package":"x.zip"}"#,
        ] {
            guard case .failure(let failure) = parse("read", payload) else {
                Issue.record("accepted: \(payload)")
                continue
            }
            #expect(failure.error.kind == "bad_request")
        }
        #expect(GATTCommandRequest.isPackageName(String(repeating: "a", count: 128)))
        #expect(!GATTCommandRequest.isPackageName(String(repeating: "a", count: 129)))
    }
}
