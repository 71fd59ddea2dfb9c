import Testing

@testable import BeaconModel

@Suite struct BluetoothAddressTests {
    @Test func roundTripsHCIOrder() {
        let address = BluetoothAddress(littleEndianBytes: [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        #expect(address?.description == "11:22:33:44:55:66")
        #expect(address?.littleEndianBytes == [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
    }

    @Test(arguments: ["aa:bb:cc:dd:ee:ff", "AA-BB-CC-DD-EE-FF"])
    func parsesStrings(_ text: String) {
        #expect(BluetoothAddress(string: text)?.description == "AA:BB:CC:DD:EE:FF")
    }

    @Test(arguments: ["", "AA:BB", "AA:BB:CC:DD:EE:GG", "AAA:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:FF:00"])
    func rejectsMalformed(_ text: String) {
        #expect(BluetoothAddress(string: text) == nil)
    }

    @Test func rejectsWrongByteCount() {
        #expect(BluetoothAddress(littleEndianBytes: [1, 2, 3]) == nil)
    }
}
