import Testing

@testable import BeaconConfigReading
@testable import BeaconFormats
@testable import BeaconModel

@Suite struct BlueZDeviceInfoTests {
    @Test func readsNameAndIdentityResolvingKey() {
        let info = BlueZDeviceInfo(
            parsing: """
                [General]
                Name=Alice's iPhone
                [LongTermKey]
                Key=00112233445566778899AABBCCDDEEFF
                [IdentityResolvingKey]
                Key = EC0234A357C8AD05341010A60A397D9B\r
                """)
        #expect(info.name == "Alice's iPhone")
        #expect(info.irk == HexBytes.parse("ec0234a357c8ad05341010a60a397d9b"))
    }

    @Test(arguments: [
        "", "[General]\nName=x", "[IdentityResolvingKey]\nKey=EC0234",
        "[IdentityResolvingKey]\nKey=zz0234a357c8ad05341010a60a397d9b",
        "[LongTermKey]\nKey=EC0234A357C8AD05341010A60A397D9B",
    ])
    func noKeyWithoutAWellFormedIdentityResolvingKey(_ text: String) {
        #expect(BlueZDeviceInfo(parsing: text).irk == nil)
    }

    @Test(
        arguments: [
            ("Alice's iPhone", "alices-iphone"), ("Bob’s Apple Watch", "bobs-apple-watch"),
            ("  Pixel 8 Pro ", "pixel-8-pro"),
            ("日本", "device-4c1122334455"), (nil, "device-4c1122334455"),
        ] as [(String?, String)])
    func deviceNames(_ name: String?, _ expected: String) {
        #expect(BlueZDeviceInfo.deviceName(from: name, address: "4C:11:22:33:44:55") == expected)
    }
}
