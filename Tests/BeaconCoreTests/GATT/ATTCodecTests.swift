import Testing

@testable import BeaconModel
@testable import DeviceProtocols

@Suite struct ATTCodecTests {
    static let batteryLevel128 = GATTUUID("00002a19-0000-1000-8000-00805f9b34fb")!
    static let dfuControlPoint = GATTUUID("8ec90001-f315-4f60-9fb8-838830daea50")!

    static let everyPDU: [ATTPDU] = [
        .errorResponse(requestOpcode: 0x10, handle: 0x0021, code: .attributeNotFound),
        .errorResponse(requestOpcode: 0x0A, handle: 0x0003, code: .application(0x81)),
        .exchangeMTURequest(clientRxMTU: 247),
        .exchangeMTUResponse(serverRxMTU: 185),
        .findInformationRequest(start: 4, end: 0xFFFF),
        .findInformationResponse([
            ATTHandleType(handle: 4, type: .uuid16(0x2902)), ATTHandleType(handle: 5, type: .uuid16(0x2901)),
        ]),
        .findInformationResponse([ATTHandleType(handle: 9, type: dfuControlPoint)]),
        .readByTypeRequest(start: 1, end: 0xFFFF, type: .characteristic),
        .readByTypeRequest(start: 1, end: 0xFFFF, type: dfuControlPoint),
        .readByTypeResponse([
            ATTHandleValue(handle: 2, value: [0x12, 0x03, 0x00, 0x19, 0x2A]),
            ATTHandleValue(handle: 5, value: [0x08, 0x06, 0x00, 0x00, 0x2A]),
        ]),
        .readRequest(handle: 3),
        .readResponse(value: [0x64]),
        .readResponse(value: []),
        .readBlobRequest(handle: 3, offset: 22),
        .readBlobResponse(value: [1, 2, 3]),
        .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService),
        .readByGroupTypeResponse([
            ATTGroupValue(handle: 1, endGroupHandle: 5, value: [0x00, 0x18]),
            ATTGroupValue(handle: 6, endGroupHandle: 9, value: [0x0F, 0x18]),
        ]),
        .writeRequest(handle: 0x0010, value: [0x01, 0x00]),
        .writeResponse,
        .writeCommand(handle: 0x0012, value: Array(0..<20)),
        .handleValueNotification(handle: 0x0003, value: [0x55]),
        .handleValueIndication(handle: 0x0007, value: [0xAA, 0xBB]),
        .handleValueConfirmation,
        .other(opcode: 0x16, parameters: [0x01, 0x00, 0x00, 0x00, 0xFF]),
    ]

    @Test(arguments: everyPDU) func roundTrips(_ pdu: ATTPDU) throws {
        let bytes = pdu.encode()
        #expect(bytes.first == pdu.opcode)
        #expect(try ATTPDU.decode(bytes) == pdu)
    }

    @Test func decodesSpecBytes() throws {
        // Read By Group Type Response: GAP 0x0001...0x0005, Battery 0x0006...0x0009.
        let services: [UInt8] = [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06, 0x00, 0x09, 0x00, 0x0F, 0x18]
        #expect(
            try ATTPDU.decode(services)
                == .readByGroupTypeResponse([
                    ATTGroupValue(handle: 1, endGroupHandle: 5, value: [0x00, 0x18]),
                    ATTGroupValue(handle: 6, endGroupHandle: 9, value: [0x0F, 0x18]),
                ]))
        #expect(try ATTPDU.decode([0x02, 0xF7, 0x00]) == .exchangeMTURequest(clientRxMTU: 247))
        #expect(
            try ATTPDU.decode([0x01, 0x0A, 0x03, 0x00, 0x0F])
                == .errorResponse(requestOpcode: 0x0A, handle: 3, code: .insufficientEncryption))
        #expect(ATTPDU.readBlobRequest(handle: 0x0102, offset: 0x0304).encode() == [0x0C, 0x02, 0x01, 0x04, 0x03])
        #expect(ATTPDU.writeCommand(handle: 0x0010, value: [9]).encode() == [0x52, 0x10, 0x00, 0x09])
    }

    @Test func findInformationWithBothSizesWidensToOneFormat() throws {
        let mixed = ATTPDU.findInformationResponse([
            ATTHandleType(handle: 1, type: .uuid16(0x2902)), ATTHandleType(handle: 2, type: Self.dfuControlPoint),
        ])
        let bytes = mixed.encode()
        #expect(bytes[1] == 0x02)
        #expect(bytes.count == 2 + 2 * 18)
        // The widened 16-bit type is normalised back on decode, so the round trip holds.
        #expect(try ATTPDU.decode(bytes) == mixed)
    }

    static let fixedSize: [[UInt8]] = [
        [0x01, 0x0A, 0x03, 0x00, 0x0F], [0x02, 0x17, 0x00], [0x03, 0x17, 0x00], [0x04, 0x01, 0x00, 0xFF, 0xFF],
        [0x0A, 0x03, 0x00], [0x0C, 0x03, 0x00, 0x16, 0x00], [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28],
        [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28], [0x13], [0x1E],
    ]

    @Test(arguments: fixedSize) func everyTruncationAndTrailingByteIsRefused(_ bytes: [UInt8]) throws {
        _ = try ATTPDU.decode(bytes)
        for length in 0..<bytes.count {
            #expect(throws: DecodeError.self) { try ATTPDU.decode(Array(bytes.prefix(length))) }
        }
        #expect(throws: DecodeError.self) { try ATTPDU.decode(bytes + [0x00]) }
    }

    @Test func listsThatDoNotDivideAreRefused() {
        // Entry length 6 but 7 bytes of entries.
        #expect(throws: DecodeError.self) {
            try ATTPDU.decode([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06])
        }
        // Entry length below the handle pair.
        #expect(throws: DecodeError.self) { try ATTPDU.decode([0x11, 0x03, 0x01, 0x00, 0x05]) }
        #expect(throws: DecodeError.self) { try ATTPDU.decode([0x09, 0x01, 0x01]) }
        // Empty lists, unknown format, 3-byte attribute type.
        #expect(throws: DecodeError.self) { try ATTPDU.decode([0x09, 0x07]) }
        #expect(throws: DecodeError.self) { try ATTPDU.decode([0x05, 0x03, 0x01, 0x00, 0x02, 0x29]) }
        #expect(throws: DecodeError.self) { try ATTPDU.decode([0x05, 0x01, 0x01, 0x00, 0x02]) }
        #expect(throws: DecodeError.self) { try ATTPDU.decode([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28, 0x00]) }
        #expect(throws: DecodeError.self) { try ATTPDU.decode([]) }
    }

    @Test func randomBytesNeverTrapAndWhatDecodesRoundTrips() throws {
        var generator = SeededGenerator(seed: 31)
        var decoded = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Bias the opcode toward the ones with structure.
            if !bytes.isEmpty, Bool.random(using: &generator) {
                bytes[0] = [0x01, 0x03, 0x05, 0x09, 0x0B, 0x0D, 0x11, 0x13, 0x1B, 0x1D].randomElement(
                    using: &generator)!
            }
            guard let pdu = try? ATTPDU.decode(bytes) else { continue }
            decoded += 1
            #expect(try ATTPDU.decode(pdu.encode()) == pdu)
        }
        #expect(decoded > 1_000)
    }

    @Test func everyErrorCodeKeepsItsByteAndTheSpecNames() {
        for raw in UInt8.min...UInt8.max {
            #expect(ATTErrorCode(rawValue: raw).rawValue == raw)
        }
        #expect(ATTErrorCode(rawValue: 0x05) == .insufficientAuthentication)
        #expect(ATTErrorCode(rawValue: 0x0A) == .attributeNotFound)
        #expect(ATTErrorCode(rawValue: 0x0C) == .encryptionKeySizeTooShort)
        #expect(ATTErrorCode(rawValue: 0x0F) == .insufficientEncryption)
        #expect(ATTErrorCode(rawValue: 0x13) == .valueNotAllowed)
        #expect(ATTErrorCode(rawValue: 0x80) == .application(0x80))
        #expect(ATTErrorCode(rawValue: 0x9F) == .application(0x9F))
        #expect(ATTErrorCode(rawValue: 0xFD) == .cccdImproperlyConfigured)
        #expect(ATTErrorCode(rawValue: 0x14) == .reserved(0x14))
        #expect(ATTErrorCode(rawValue: 0x00) == .reserved(0x00))
        #expect(ATTErrorCode.insufficientEncryption.description == "Insufficient Encryption (0x0f)")
        #expect(ATTErrorCode.outOfRange.description == "Out of Range (0xff)")
    }

    @Test func uuidsNormaliseOnTheBaseUUID() throws {
        #expect(Self.batteryLevel128 == .uuid16(0x2A19))
        #expect(GATTUUID(littleEndian: Self.wire128(0x2A19)) == .uuid16(0x2A19))
        #expect(GATTUUID.uuid16(0x2A19).full.low == GATTUUID.baseLow)
        #expect(GATTUUID("2A19") == .uuid16(0x2A19))
        #expect(GATTUUID("0x2902") == .clientCharacteristicConfiguration)
        #expect(GATTUUID("nonsense") == nil)
        #expect(GATTUUID("8ec90001f3154f609fb8838830daea50") == nil)
        #expect(Self.dfuControlPoint.description == "8ec90001-f315-4f60-9fb8-838830daea50")
        #expect(GATTUUID(littleEndian: Self.dfuControlPoint.littleEndianBytes) == Self.dfuControlPoint)
        #expect(Self.dfuControlPoint.littleEndianBytes.first == 0x50)
        #expect(GATTUUID.uuid16(0x180F).description == "180f")
        #expect(GATTUUID(littleEndian: [1, 2, 3]) == nil)
        // A 32-bit SIG value on the base stays 128-bit (ATT carries only 16 and 128).
        #expect(
            GATTUUID(high: 0x0001_2345_0000_1000, low: GATTUUID.baseLow)
                == .uuid128(
                    high: 0x0001_2345_0000_1000, low: GATTUUID.baseLow))
    }

    static func wire128(_ short: UInt16) -> [UInt8] {
        [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00]
            + [UInt8(short & 0xFF), UInt8(short >> 8), 0x00, 0x00]
    }
}

/// A small deterministic generator (SplitMix64) so the random tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
