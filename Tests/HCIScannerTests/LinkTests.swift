import Testing
@testable import HCIScanner

@Test func libbluetoothHeadersImport() {
    #expect(HCIScannerLibrary.eventHeaderSize == 2)
}
