import Testing

@testable import BeaconModel
@testable import DeviceProtocols

/// Drives a `GATTClient` as a scripted peer would.
struct GATTPeerScript {
    var client: GATTClient
    var now: Timestamp = 0

    init(mtu: Int = 23) { client = GATTClient(preferredMTU: mtu) }

    mutating func submit(_ procedure: GATTProcedure) -> [GATTClientAction] {
        client.handle(.submit(procedure, at: now))
    }
    mutating func peer(_ pdu: ATTPDU) -> [GATTClientAction] { peer(pdu.encode()) }
    mutating func peer(_ bytes: [UInt8]) -> [GATTClientAction] {
        now += 0.01
        return client.handle(.received(bytes, at: now))
    }
}

extension GATTClientAction {
    var sent: ATTPDU? {
        if case .send(let pdu) = self { pdu } else { nil }
    }
    var error: GATTError? {
        if case .failed(_, let error) = self { error } else { nil }
    }
}

@Suite struct GATTClientTests {
    static let battery = GATTService(uuid: .uuid16(0x180F), handle: 0x0010, endHandle: 0x0020)

    @Test func exchangesMTUAndUsesTheSmaller() {
        var script = GATTPeerScript(mtu: 247)
        #expect(script.submit(.exchangeMTU) == [.send(.exchangeMTURequest(clientRxMTU: 247))])
        #expect(script.peer(.exchangeMTUResponse(serverRxMTU: 185)) == [.completed(.exchangeMTU, .mtu(185))])
        #expect(script.client.mtu == 185)
    }

    @Test func serverMTUBelowTheMinimumIsMalformed() {
        var script = GATTPeerScript(mtu: 247)
        _ = script.submit(.exchangeMTU)
        let actions = script.peer(.exchangeMTUResponse(serverRxMTU: 10))
        #expect(actions.first?.error == .malformedResponse(.exchangeMTU, reason: "server MTU 10 is below 23"))
        #expect(script.client.mtu == 23)
    }

    @Test func discoversServicesAcrossPagesUntilAttributeNotFound() {
        var script = GATTPeerScript()
        #expect(
            script.submit(.discoverPrimaryServices)
                == [.send(.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService))])
        let page1 = script.peer(
            .readByGroupTypeResponse([
                ATTGroupValue(handle: 1, endGroupHandle: 5, value: [0x00, 0x18]),
                ATTGroupValue(handle: 6, endGroupHandle: 9, value: [0x0F, 0x18]),
            ]))
        #expect(page1 == [.send(.readByGroupTypeRequest(start: 10, end: 0xFFFF, type: .primaryService))])
        let dfu = GATTUUID("8ec90001-f315-4f60-9fb8-838830daea50")!
        let page2 = script.peer(
            .readByGroupTypeResponse([ATTGroupValue(handle: 10, endGroupHandle: 0x10, value: dfu.littleEndianBytes)]))
        #expect(page2 == [.send(.readByGroupTypeRequest(start: 0x11, end: 0xFFFF, type: .primaryService))])
        let end = script.peer(.errorResponse(requestOpcode: 0x10, handle: 0x11, code: .attributeNotFound))
        #expect(
            end == [
                .completed(
                    .discoverPrimaryServices,
                    .services([
                        GATTService(uuid: .uuid16(0x1800), handle: 1, endHandle: 5),
                        GATTService(uuid: .uuid16(0x180F), handle: 6, endHandle: 9),
                        GATTService(uuid: dfu, handle: 10, endHandle: 0x10),
                    ]))
            ])
        #expect(script.client.nextDeadline == nil)
    }

    @Test func aServiceEndingAtTheLastHandleEndsDiscovery() {
        var script = GATTPeerScript()
        _ = script.submit(.discoverPrimaryServices)
        let actions = script.peer(
            .readByGroupTypeResponse([ATTGroupValue(handle: 1, endGroupHandle: 0xFFFF, value: [0x00, 0x18])]))
        #expect(
            actions == [
                .completed(
                    .discoverPrimaryServices,
                    .services([GATTService(uuid: .uuid16(0x1800), handle: 1, endHandle: 0xFFFF)]))
            ])
    }

    @Test func discoversCharacteristicsAndClosesTheirRanges() {
        var script = GATTPeerScript()
        #expect(
            script.submit(.discoverCharacteristics(Self.battery))
                == [.send(.readByTypeRequest(start: 0x10, end: 0x20, type: .characteristic))])
        let custom = GATTUUID("8ec90002-f315-4f60-9fb8-838830daea50")!
        let page = script.peer(
            .readByTypeResponse([ATTHandleValue(handle: 0x11, value: [0x12, 0x12, 0x00, 0x19, 0x2A])]))
        #expect(page == [.send(.readByTypeRequest(start: 0x12, end: 0x20, type: .characteristic))])
        let page2 = script.peer(
            .readByTypeResponse([ATTHandleValue(handle: 0x15, value: [0x04, 0x16, 0x00] + custom.littleEndianBytes)]))
        #expect(page2 == [.send(.readByTypeRequest(start: 0x16, end: 0x20, type: .characteristic))])
        let end = script.peer(.errorResponse(requestOpcode: 0x08, handle: 0x16, code: .attributeNotFound))
        #expect(
            end == [
                .completed(
                    .discoverCharacteristics(Self.battery),
                    .characteristics([
                        GATTCharacteristic(
                            uuid: .uuid16(0x2A19), declarationHandle: 0x11, valueHandle: 0x12,
                            properties: [.read, .notify], endHandle: 0x14),
                        GATTCharacteristic(
                            uuid: custom, declarationHandle: 0x15, valueHandle: 0x16, properties: .writeWithoutResponse,
                            endHandle: 0x20),
                    ]))
            ])
    }

    @Test func discoversDescriptorsAndStopsAtTheCharacteristicEnd() {
        var script = GATTPeerScript()
        let level = GATTCharacteristic(
            uuid: .uuid16(0x2A19), declarationHandle: 0x11, valueHandle: 0x12, properties: [.notify], endHandle: 0x15)
        #expect(script.submit(.discoverDescriptors(level)) == [.send(.findInformationRequest(start: 0x13, end: 0x15))])
        #expect(
            script.peer(
                .findInformationResponse([ATTHandleType(handle: 0x13, type: .clientCharacteristicConfiguration)]))
                == [.send(.findInformationRequest(start: 0x14, end: 0x15))])
        let end = script.peer(
            .findInformationResponse([
                ATTHandleType(handle: 0x14, type: .uuid16(0x2901)), ATTHandleType(handle: 0x15, type: .uuid16(0x2904)),
            ]))
        #expect(
            end == [
                .completed(
                    .discoverDescriptors(level),
                    .descriptors([
                        GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 0x13),
                        GATTDescriptor(uuid: .uuid16(0x2901), handle: 0x14),
                        GATTDescriptor(uuid: .uuid16(0x2904), handle: 0x15),
                    ]))
            ])
        // No room for descriptors: done without a request.
        var empty = GATTPeerScript()
        let bare = GATTCharacteristic(
            uuid: .uuid16(0x2A19), declarationHandle: 0x11, valueHandle: 0x12, properties: [.read], endHandle: 0x12)
        #expect(empty.submit(.discoverDescriptors(bare)) == [.completed(.discoverDescriptors(bare), .descriptors([]))])
    }

    @Test func readsAShortValue() {
        var script = GATTPeerScript()
        #expect(script.submit(.read(handle: 0x12)) == [.send(.readRequest(handle: 0x12))])
        #expect(script.peer(.readResponse(value: [0x5A])) == [.completed(.read(handle: 0x12), .value([0x5A]))])
    }

    @Test func readsALongValueWithReadBlob() {
        var script = GATTPeerScript()
        let value = (0..<47).map { UInt8($0) }
        _ = script.submit(.read(handle: 0x30))
        #expect(
            script.peer(.readResponse(value: Array(value[0..<22]))) == [
                .send(.readBlobRequest(handle: 0x30, offset: 22))
            ])
        #expect(
            script.peer(.readBlobResponse(value: Array(value[22..<44]))) == [
                .send(.readBlobRequest(handle: 0x30, offset: 44))
            ])
        #expect(
            script.peer(.readBlobResponse(value: Array(value[44...]))) == [
                .completed(.read(handle: 0x30), .value(value))
            ])
    }

    @Test func aValueOfExactlyMTUMinusOneEndsOnAttributeNotLong() {
        var script = GATTPeerScript()
        let value = [UInt8](repeating: 7, count: 22)
        _ = script.submit(.read(handle: 0x30))
        _ = script.peer(.readResponse(value: value))
        #expect(
            script.peer(.errorResponse(requestOpcode: 0x0C, handle: 0x30, code: .attributeNotLong))
                == [.completed(.read(handle: 0x30), .value(value))])
    }

    @Test func aValueThatNeverEndsIsMalformedAfter512Bytes() {
        var script = GATTPeerScript()
        _ = script.submit(.read(handle: 0x30))
        var requests = 0
        var last: [GATTClientAction] = script.peer(.readResponse(value: [UInt8](repeating: 1, count: 22)))
        while last.first?.sent != nil, requests < 100 {
            requests += 1
            last = script.peer(.readBlobResponse(value: [UInt8](repeating: 1, count: 22)))
        }
        #expect(requests == 23)  // 24 chunks of 22 = 528 > 512
        #expect(
            last == [.failed(.read(handle: 0x30), .malformedResponse(.read, reason: "value longer than 512 bytes"))])
    }

    @Test func writesWithAndWithoutResponse() {
        var script = GATTPeerScript()
        #expect(
            script.submit(.write(handle: 0x40, value: [1, 2])) == [.send(.writeRequest(handle: 0x40, value: [1, 2]))])
        // A command goes out at once, even with a request outstanding.
        #expect(
            script.submit(.writeWithoutResponse(handle: 0x41, value: [3]))
                == [
                    .send(.writeCommand(handle: 0x41, value: [3])),
                    .completed(.writeWithoutResponse(handle: 0x41, value: [3]), .written),
                ])
        #expect(script.peer(.writeResponse) == [.completed(.write(handle: 0x40, value: [1, 2]), .written)])
        let long = [UInt8](repeating: 0, count: 21)
        #expect(
            script.submit(.write(handle: 0x40, value: long)).first?.error
                == .valueTooLong(.write, length: 21, maximum: 20))
        #expect(
            script.submit(.writeWithoutResponse(handle: 0x40, value: long)).first?.error
                == .valueTooLong(.writeWithoutResponse, length: 21, maximum: 20))
    }

    @Test func aWriteQueuedBehindAnMTUExchangeUsesTheNewMTU() {
        var script = GATTPeerScript(mtu: 100)
        let value = [UInt8](repeating: 1, count: 60)
        _ = script.submit(.exchangeMTU)
        #expect(script.submit(.write(handle: 5, value: value)) == [])
        #expect(
            script.peer(.exchangeMTUResponse(serverRxMTU: 247))
                == [.completed(.exchangeMTU, .mtu(100)), .send(.writeRequest(handle: 5, value: value))])
        // Too long for the MTU in force when its turn comes: refused, and the next one goes out.
        _ = script.submit(.read(handle: 1))
        _ = script.submit(.write(handle: 5, value: value + value))
        _ = script.submit(.read(handle: 2))
        #expect(
            script.peer(.writeResponse)
                == [.completed(.write(handle: 5, value: value), .written), .send(.readRequest(handle: 1))])
        #expect(
            script.peer(.readResponse(value: [1]))
                == [
                    .completed(.read(handle: 1), .value([1])),
                    .failed(.write(handle: 5, value: value + value), .valueTooLong(.write, length: 120, maximum: 97)),
                    .send(.readRequest(handle: 2)),
                ])
    }

    @Test func subscribesAndConfirmsIndications() {
        var script = GATTPeerScript()
        #expect(
            script.submit(.subscribe(cccd: 0x13, .notifications)) == [
                .send(.writeRequest(handle: 0x13, value: [1, 0]))
            ])
        #expect(script.peer(.writeResponse) == [.completed(.subscribe(cccd: 0x13, .notifications), .written)])
        #expect(
            script.submit(.subscribe(cccd: 0x17, .indications)) == [.send(.writeRequest(handle: 0x17, value: [2, 0]))])
        #expect(script.peer(.writeResponse).count == 1)
        #expect(script.submit(.subscribe(cccd: 0x17, .none)) == [.send(.writeRequest(handle: 0x17, value: [0, 0]))])
        #expect(
            script.peer(.handleValueNotification(handle: 0x12, value: [42])) == [
                .notification(handle: 0x12, value: [42])
            ])
        #expect(
            script.peer(.handleValueIndication(handle: 0x16, value: [7]))
                == [.send(.handleValueConfirmation), .indication(handle: 0x16, value: [7])])
        // The outstanding CCCD write is untouched by the notifications.
        #expect(script.peer(.writeResponse) == [.completed(.subscribe(cccd: 0x17, .none), .written)])
    }

    @Test func oneRequestAtATimeAndResultsInOrder() {
        var script = GATTPeerScript()
        #expect(script.submit(.read(handle: 1)) == [.send(.readRequest(handle: 1))])
        #expect(script.submit(.read(handle: 2)) == [])
        #expect(script.submit(.write(handle: 3, value: [0])) == [])
        #expect(script.client.queuedCount == 2)
        #expect(
            script.peer(.readResponse(value: [1])) == [
                .completed(.read(handle: 1), .value([1])), .send(.readRequest(handle: 2)),
            ])
        #expect(
            script.peer(.readResponse(value: [2]))
                == [.completed(.read(handle: 2), .value([2])), .send(.writeRequest(handle: 3, value: [0]))])
        #expect(script.peer(.writeResponse) == [.completed(.write(handle: 3, value: [0]), .written)])
    }

    @Test func aRequestTimesOutAfter30SecondsAndClosesTheBearer() {
        var script = GATTPeerScript()
        _ = script.submit(.read(handle: 1))
        _ = script.submit(.discoverPrimaryServices)
        #expect(script.client.nextDeadline == 30)
        #expect(script.client.handle(.tick(at: 29.99)) == [])
        #expect(
            script.client.handle(.tick(at: 30))
                == [
                    .failed(.read(handle: 1), .timeout(.read)), .closeBearer(.timeout(.read)),
                    .failed(.discoverPrimaryServices, .disconnected(.discoverServices)),
                ])
        #expect(script.client.isClosed)
        #expect(script.client.nextDeadline == nil)
        #expect(script.submit(.read(handle: 2)) == [.failed(.read(handle: 2), .disconnected(.read))])
        // A late response after the bearer closed is dropped.
        #expect(script.peer(.readResponse(value: [1])) == [])
    }

    @Test func eachPageGetsItsOwnDeadline() {
        var script = GATTPeerScript()
        _ = script.submit(.discoverPrimaryServices)
        script.now = 20
        _ = script.peer(.readByGroupTypeResponse([ATTGroupValue(handle: 1, endGroupHandle: 5, value: [0x00, 0x18])]))
        #expect(abs((script.client.nextDeadline ?? 0) - 50.01) < 1e-9)
        #expect(script.client.handle(.tick(at: 31)) == [])
    }

    @Test func aDisconnectFailsEverythingNamingItsStep() {
        var script = GATTPeerScript()
        _ = script.submit(.subscribe(cccd: 5, .notifications))
        _ = script.submit(.discoverCharacteristics(Self.battery))
        #expect(
            script.client.handle(.disconnected)
                == [
                    .failed(.subscribe(cccd: 5, .notifications), .disconnected(.subscribe)),
                    .failed(.discoverCharacteristics(Self.battery), .disconnected(.discoverCharacteristics)),
                ])
    }

}
