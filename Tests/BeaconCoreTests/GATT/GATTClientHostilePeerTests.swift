import Testing

@testable import DeviceProtocols

/// Peers that answer wrongly: each gives a typed error naming the step, never a trap, a hang or a loop.
@Suite struct GATTClientHostilePeerTests {
    static let battery = GATTClientTests.battery

    @Test func handlesGoingBackwardsEndDiscoveryInsteadOfLooping() {
        var script = GATTPeerScript()
        _ = script.submit(.discoverPrimaryServices)
        let page = ATTPDU.readByGroupTypeResponse([ATTGroupValue(handle: 1, endGroupHandle: 5, value: [0x00, 0x18])])
        #expect(script.peer(page).first?.sent != nil)
        // The same page again: its handle lies before the requested start.
        let again = script.peer(page)
        #expect(again.count == 1)
        #expect(again.first?.error?.step == .discoverServices)
        if case .malformedResponse = again.first?.error {} else { Issue.record("expected malformed, got \(again)") }
        // A group ending before it starts.
        var other = GATTPeerScript()
        _ = other.submit(.discoverPrimaryServices)
        let inverted = other.peer(
            .readByGroupTypeResponse([ATTGroupValue(handle: 9, endGroupHandle: 3, value: [0x00, 0x18])]))
        #expect(inverted.first?.error?.step == .discoverServices)
        #expect(other.client.nextDeadline == nil)
    }

    @Test(arguments: [
        ATTHandleValue(handle: 0x11, value: [0x02, 0x11, 0x00, 0x19, 0x2A]),  // value handle not after declaration
        ATTHandleValue(handle: 0x11, value: [0x02, 0x30, 0x00, 0x19, 0x2A]),  // value handle past the service
        ATTHandleValue(handle: 0x40, value: [0x02, 0x41, 0x00, 0x19, 0x2A]),  // declaration past the service
        ATTHandleValue(handle: 0x08, value: [0x02, 0x09, 0x00, 0x19, 0x2A]),  // declaration before the range
        ATTHandleValue(handle: 0x11, value: [0x02, 0x12, 0x00, 0x19]),  // 4-byte declaration value
    ])
    func badCharacteristicDeclarationsAreMalformed(_ entry: ATTHandleValue) {
        var script = GATTPeerScript()
        _ = script.submit(.discoverCharacteristics(Self.battery))
        let actions = script.peer(.readByTypeResponse([entry]))
        #expect(actions.count == 1)
        #expect(actions.first?.error?.step == .discoverCharacteristics)
    }

    @Test func aResponseThisClientNeverAsksForIsMalformed() {
        var script = GATTPeerScript()
        _ = script.submit(.read(handle: 1))
        // Read Multiple Response (0x0F) to a Read Request.
        let actions = script.peer([0x0F, 0x01, 0x02])
        #expect(actions.count == 1)
        #expect(actions.first?.error?.step == .read)
        #expect(script.peer([0x17, 0x01, 0x00]).first?.error?.step == .unsolicited)
    }

    @Test(arguments: [
        (
            ATTErrorCode.insufficientAuthentication,
            GATTError.insufficientAuthentication(.read, .insufficientAuthentication)
        ),
        (.insufficientAuthorization, .insufficientAuthentication(.read, .insufficientAuthorization)),
        (.insufficientEncryption, .insufficientEncryption(.read, .insufficientEncryption)),
        (.encryptionKeySizeTooShort, .insufficientEncryption(.read, .encryptionKeySizeTooShort)),
        (.invalidHandle, .notFound(.read, handle: 9)),
        (.attributeNotFound, .notFound(.read, handle: 9)),
        (.readNotPermitted, .refused(.read, .readNotPermitted, handle: 9)),
        (.application(0x80), .refused(.read, .application(0x80), handle: 9)),
    ])
    func errorResponsesBecomeTypedErrors(_ code: ATTErrorCode, _ expected: GATTError) {
        var script = GATTPeerScript()
        _ = script.submit(.read(handle: 9))
        #expect(
            script.peer(.errorResponse(requestOpcode: 0x0A, handle: 9, code: code)) == [
                .failed(.read(handle: 9), expected)
            ])
    }

    @Test func hostilePeerResponsesGiveTypedErrorsAndTheQueueMovesOn() {
        var script = GATTPeerScript()
        // A response with no request outstanding.
        let stray = script.peer(.readResponse(value: [1]))
        #expect(stray.count == 1)
        #expect(stray.first?.error?.step == .unsolicited)
        // The wrong opcode for the request.
        _ = script.submit(.read(handle: 1))
        _ = script.submit(.read(handle: 2))
        let wrong = script.peer(.writeResponse)
        #expect(wrong.first?.error?.step == .read)
        #expect(wrong.last == .send(.readRequest(handle: 2)))
        // An Error Response naming another request.
        let other = script.peer(.errorResponse(requestOpcode: 0x12, handle: 2, code: .writeNotPermitted))
        #expect(
            other == [
                .failed(
                    .read(handle: 2),
                    .malformedResponse(.read, reason: "Error Response for opcode 18, request was 10"))
            ])
        // A truncated response.
        _ = script.submit(.exchangeMTU)
        let truncated = script.peer([0x03, 0x17])
        #expect(truncated.first?.error?.step == .exchangeMTU)
        // An oversized PDU (longer than ATT_MTU).
        _ = script.submit(.read(handle: 3))
        let oversized = script.peer([0x0B] + [UInt8](repeating: 0, count: 30))
        #expect(oversized.first?.error?.step == .read)
        #expect(script.client.nextDeadline == nil)
        // A malformed notification is not charged to anything outstanding.
        _ = script.submit(.read(handle: 4))
        let badNotification = script.peer([0x1B, 0x01])
        #expect(badNotification.first?.error?.step == .unsolicited)
        #expect(script.client.nextDeadline != nil)
    }

    @Test func answersAPeersRequests() {
        var script = GATTPeerScript(mtu: 100)
        #expect(
            script.peer(.readRequest(handle: 1)) == [
                .send(.errorResponse(requestOpcode: 0x0A, handle: 0, code: .requestNotSupported))
            ])
        #expect(script.peer(.other(opcode: 0x16, parameters: [1, 0, 0, 0])).first?.sent?.opcode == 0x01)
        #expect(script.peer(.other(opcode: 0xD2, parameters: [1, 0, 0, 0])) == [])
        #expect(script.peer(.exchangeMTURequest(clientRxMTU: 64)) == [.send(.exchangeMTUResponse(serverRxMTU: 100))])
        #expect(script.client.mtu == 64)
    }

    @Test func randomPeerPDUsNeverTrapOrHang() {
        var generator = SeededGenerator(seed: 0xBEEF)
        var script = GATTPeerScript(mtu: 64)
        let procedures: [GATTProcedure] = [
            .discoverPrimaryServices, .discoverCharacteristics(Self.battery), .read(handle: 3), .exchangeMTU,
            .discoverDescriptors(
                GATTCharacteristic(
                    uuid: .uuid16(0x2A19), declarationHandle: 1, valueHandle: 2, properties: [], endHandle: 0xFFFF)),
        ]
        var sends = 0
        var received = 0
        for round in 0..<5_000 {
            if round % 7 == 0 { _ = script.submit(procedures.randomElement(using: &generator)!) }
            let opcode = [0x01, 0x03, 0x05, 0x09, 0x0B, 0x0D, 0x11, 0x13, 0x1B, 0x1D].randomElement(using: &generator)!
            let length = Int.random(in: 0...30, using: &generator)
            let bytes = [UInt8(opcode)] + (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            received += 1
            sends += script.peer(bytes).filter { $0.sent != nil }.count
        }
        // Each peer PDU triggers at most one request (or confirmation), so the client cannot be driven to flood.
        #expect(sends <= received + 5_000 / 7 + 1)
        #expect(script.client.queuedCount < 5_000 / 7 + 1)
    }
}
