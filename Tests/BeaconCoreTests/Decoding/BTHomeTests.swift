import Testing

@testable import BeaconFormats
@testable import BeaconModel
@testable import BeaconTracking

/// BTHome v2: objects, events, device information, encryption (the bthome-ble published encryption vectors),
/// replay and downgrade.
@Suite struct BTHomeTests {
    static let sender = BluetoothAddress(string: "54:48:E6:8F:80:A5")!
    static let bindKey = DecodingFixtures.hex("231d39c1d7cc1ab1aee224cd096db932")

    static func serviceData(_ body: String) -> [UInt8] {
        let bytes = DecodingFixtures.hex(body)
        return [UInt8(bytes.count + 3), 0x16, 0xD2, 0xFC] + bytes
    }

    func beacons(_ body: String, keys: SensorKeys = SensorKeys(), address: BluetoothAddress = sender) -> [Beacon] {
        BeaconDecoder(keys: keys).decode(
            AdvertisingReport(
                timestamp: 1, eventType: 0x10, isExtended: false, address: address, addressType: .publicDevice,
                rssi: -60, txPower: nil, data: Self.serviceData(body))
        ).beacons
    }

    var keys: SensorKeys {
        var keys = SensorKeys()
        keys.addBTHomeKey(Self.bindKey, for: Self.sender)
        return keys
    }

    @Test func plainReadings() throws {
        let beacon = try #require(beacons("40 00 01 01 5d 02 c409 03 bf13 04 138a01 05 138a14 0c 020c").first)
        #expect(beacon.format == "bthome")
        #expect(beacon.beaconID == "bthome:54:48:E6:8F:80:A5")
        #expect(
            beacon.fields == [
                "packet_id": .int(1), "battery_pct": .int(93), "temperature_c": .double(25),
                "humidity_pct": .double(50.55),
                "pressure_hpa": .double(1008.83), "illuminance_lx": .double(13460.67), "voltage_v": .double(3.074),
            ])
    }

    @Test func signedValuesAndSpecialScales() throws {
        // 0x45 temperature s16 x0.1 (-10.5), 0x57 s8 x1 (-5), 0x58 s8 x0.35 rounded to 0.1 (-3 x 0.35 = -1.05 -> -1.0).
        let beacon = try #require(beacons("40 45 97ff 57 fb 58 fd").first)
        #expect(
            beacon.fields == [
                "temperature_c_1": .double(-10.5), "temperature_c_2": .int(-5), "temperature_c_3": .double(-1.0),
            ])
        // 0x3f rotation s16 x0.1, 0x62 speed s32 x0.000001
        let other = try #require(beacons("40 3f 0cfe 62 c0bdf0ff").first)
        #expect(other.fields == ["rotation_deg": .double(-50.0), "speed_ms": .double(-1.0)])
    }

    @Test func binarySensorsEventsTextAndRaw() throws {
        let beacon = try #require(beacons("44 11 01 1a 00 21 01 2d 01 3a 04 3c 0103 53 05 68656c6c6f 54 02 c0de").first)
        #expect(
            beacon.fields == [
                "opening": .bool(true), "door": .bool(false), "motion": .bool(true), "window": .bool(true),
                "button": .string("long_press"), "dimmer": .string("rotate_left"), "dimmer_steps": .int(3),
                "text": .string("hello"), "raw": .string("c0de"), "trigger_based": .bool(true),
            ])
        // Several buttons: numbered in order; a button without event (0) is counted but not reported.
        let buttons = try #require(beacons("40 3a 00 3a 01 3a 80").first)
        #expect(buttons.fields == ["button_2": .string("press"), "button_3": .string("hold_press")])
    }

    @Test func deviceInformationAndCommands() throws {
        let beacon = try #require(beacons("40 3b 01 02 05 f0 0100 f1 00010204 f2 000106").first)
        #expect(beacon.fields["command"] == .string("toggle"))
        #expect(beacon.fields["command_args"] == .string("05"))
        #expect(beacon.fields["device_type_id"] == .int(1))
        #expect(beacon.fields["firmware_version"] != nil)
    }

    @Test func unknownIDOrTruncationEndsParsingCleanly() throws {
        // 0x30 is not an object id: the temperature before it is kept, the humidity after it is not read.
        #expect(try #require(beacons("40 02 c409 30 03 bf13").first).fields == ["temperature_c": .double(25)])
        // A truncated humidity ends parsing; a zero-length text object is skipped.
        #expect(try #require(beacons("40 53 00 02 c409 03 bf").first).fields == ["temperature_c": .double(25)])
        // Version other than 2, and the bare info byte.
        #expect(beacons("20 02 c409").isEmpty)
        #expect(try #require(beacons("40").first).fields.isEmpty)
    }

    @Test func macIncludedIdentifiesTheDevice() throws {
        let beacon = try #require(beacons("42 a5808fe64854 02 c409", address: BluetoothAddress(rawValue: 1)).first)
        #expect(beacon.beaconID == "bthome:54:48:E6:8F:80:A5")
    }

    /// bthome-ble tests/test_v2_encryption.py, example 1: `02ca09 03bf13` encrypted with counter 00112233 for MAC
    /// 54:48:E6:8F:80:A5 and bind key 231d39c1d7cc1ab1aee224cd096db932.
    static let encryptedExample = "41 a47266c95f73 00112233 78237214"

    @Test func ccmMatchesThePublishedVectors() throws {
        let ccm = AESCCM(cipher: try #require(AES128(key: Self.bindKey)), tagLength: 4)
        let nonce = DecodingFixtures.hex("5448e68f80a5 d2fc 41 00112233")
        let sealed = try #require(ccm.seal(DecodingFixtures.hex("02ca0903bf13"), nonce: nonce))
        #expect(HexText.hex(sealed.ciphertext + sealed.tag, 0..<10) == "a47266c95f7378237214")
        let second = try #require(ccm.seal(DecodingFixtures.hex("2101"), nonce: nonce))
        #expect(HexText.hex(second.ciphertext + second.tag, 0..<6) == "87b972b0231f")
        #expect(ccm.open(sealed.ciphertext, tag: sealed.tag, nonce: nonce) == DecodingFixtures.hex("02ca0903bf13"))
        var forged = sealed.ciphertext
        forged[0] ^= 1
        #expect(ccm.open(forged, tag: sealed.tag, nonce: nonce) == nil)
    }

    @Test func encryptedWithTheRightKey() throws {
        let beacon = try #require(beacons(Self.encryptedExample, keys: keys).first)
        #expect(
            beacon.fields == [
                "encrypted": .bool(true), "encryption_counter": .int(0x3322_1100),
                "temperature_c": .double(25.06), "humidity_pct": .double(50.55),
            ])
    }

    @Test func encryptedWithoutAKeyOrWithTheWrongKey() throws {
        // No key for this device: only the fact that it is encrypted.
        #expect(try #require(beacons(Self.encryptedExample).first).fields == ["encrypted": .bool(true)])
        // A wrong key: refused.
        var wrong = SensorKeys()
        wrong.addBTHomeKey(DecodingFixtures.hex("814aac74c4f17b6c1581e1ab87816b99"), for: Self.sender)
        #expect(beacons(Self.encryptedExample, keys: wrong).isEmpty)
        // A flipped tag byte: refused.
        #expect(beacons("41 a47266c95f73 00112233 78237215", keys: keys).isEmpty)
    }

    @Test func plaintextFromADeviceWithAKeyIsADowngrade() {
        #expect(beacons("40 02 c409", keys: keys).isEmpty)
        #expect(!beacons("40 02 c409").isEmpty)
    }

    @Test func replayedCounterIsADuplicate() throws {
        let ccm = AESCCM(cipher: try #require(AES128(key: Self.bindKey)), tagLength: 4)
        func frame(counter: UInt32) throws -> [UInt8] {
            let counterBytes = (0..<4).map { UInt8(truncatingIfNeeded: counter >> (8 * $0)) }
            let nonce = DecodingFixtures.hex("5448e68f80a5 d2fc 41") + counterBytes
            let sealed = try #require(ccm.seal(DecodingFixtures.hex("02ca09"), nonce: nonce))
            return Self.serviceData("41") + sealed.ciphertext + counterBytes + sealed.tag
        }
        func fixLength(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count - 1)] + bytes.dropFirst() }
        var pipeline = GatewayPipeline(
            decoder: BeaconDecoder(keys: keys),
            engine: RegionEngine(regions: [], distance: DistanceEstimator(settings: DistanceSettings()), now: 0),
            includeDevices: false)
        var events: [EngineEvent] = []
        for (time, counter) in [(1.0, UInt32(200)), (2.0, 150), (3.0, 200), (4.0, 201)] {
            let report = AdvertisingReport(
                timestamp: Timestamp(time), eventType: 0x10, isExtended: false, address: Self.sender,
                addressType: .publicDevice, rssi: -60, txPower: nil, data: fixLength(try frame(counter: counter)))
            pipeline.ingest(report, into: &events)
        }
        #expect(pipeline.counters.replayedFrames == 2)
        #expect(pipeline.counters.beacons == 2)
        // The third frame repeats the first one's bytes: decoded from the repeat cache, and still a replay.
        #expect(pipeline.counters.repeatedReports == 1)
    }

    /// A device that starts counting again (battery change): a counter below 100 when the last accepted one is at
    /// least 100 higher is a restart and accepted (as bthome-ble does); an equal counter or a lower one within 100
    /// of the last stays a duplicate, also right after a restart.
    @Test func aCounterRestartBelow100IsAcceptedButNotANearbyReplay() {
        func observation(_ counter: Int64) -> Observation {
            Observation(
                timestamp: 1, beaconID: "bthome:54:48:E6:8F:80:A5", format: "bthome", address: Self.sender,
                rssi: -60, fields: ["encrypted": .bool(true), "encryption_counter": .int(counter)])
        }
        var counterGuard = EncryptedCounterGuard()
        let steps: [(Int64, Bool)] = [
            (5000, true), (4999, false), (5000, false), (99, true), (99, false), (98, false),
            (100, true), (0, true), (12, true), (11, false), (150, true), (149, false),
        ]
        for (counter, admitted) in steps {
            let result = counterGuard.admit(observation(counter))
            #expect(result == admitted, "counter \(counter)")
        }
        #expect(counterGuard.duplicates == 6)
        #expect(counterGuard.restarts == 2)
        // Restored from the database after a gateway restart, the device's counter restart is accepted too.
        var restored = EncryptedCounterGuard()
        restored.restore(["bthome:54:48:E6:8F:80:A5": 70_000])
        let first = restored.admit(observation(3))
        let again = restored.admit(observation(3))
        #expect(first)
        #expect(!again)
    }
}
