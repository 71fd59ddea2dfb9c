import DeviceProtocols
import Testing

/// The request-to-action mapping of active connections (`ESPHomeConnectionTable`), and what hostile or
/// out-of-order requests get: always the answer the client waits for, never an operation on a device.
@Suite struct ESPHomeConnectionTableTests {
    static let device: UInt64 = 0xAABB_CCDD_EEFF
    static let other: UInt64 = 0x0011_2233_4455

    /// The fields of a reply body (varints as integers, bytes as arrays).
    static func fields(_ body: [UInt8]) throws -> [Int: ProtobufReader.Value] {
        var reader = ProtobufReader(body[...])
        var out: [Int: ProtobufReader.Value] = [:]
        while let (field, value) = try reader.next() { out[field] = value }
        return out
    }

    /// The single reply of `actions` of `type`, as fields.
    static func reply(_ actions: [ESPHomeConnectionTable.Action], _ type: UInt32) throws -> [Int: ProtobufReader.Value]
    {
        let bodies = actions.compactMap { action -> [UInt8]? in
            if case let .reply(replyType, body) = action, replyType == type { return body }
            return nil
        }
        try #require(bodies.count == 1, "expected one reply of type \(type) in \(actions)")
        return try fields(bodies[0])
    }

    static func connected(_ table: inout ESPHomeConnectionTable, _ address: UInt64 = device) {
        _ = table.request(.device(address: address, kind: .connectWithoutCache, addressType: 0))
        _ = table.report(.connected(mtu: 247), from: address)
    }

    @Test func connectOpensWithTheRequestsAddressTypeAndAnswersWhenTheLinkIsUp() throws {
        var table = ESPHomeConnectionTable()
        #expect(
            table.request(.device(address: Self.device, kind: .connectWithCache, addressType: 1)) == [
                .open(address: Self.device, random: true)
            ])
        #expect(
            table.request(.device(address: Self.other, kind: .connectWithoutCache, addressType: nil)) == [
                .open(address: Self.other, random: false)
            ])
        // A second connect while connecting: nothing new (the answer comes with the link).
        #expect(table.request(.device(address: Self.device, kind: .connectWithCache, addressType: 1)).isEmpty)
        let actions = table.report(.connected(mtu: 247), from: Self.device)
        let answer = try Self.reply(actions, ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(answer[1]?.integer == Self.device && answer[2]?.integer == 1 && answer[3]?.integer == 247)
        #expect(answer[4] == nil)
        #expect(actions.contains(.connectionsFree))
        // Connected: a connect again is answered at once with the MTU.
        let again = try Self.reply(
            table.request(.device(address: Self.device, kind: .connectWithCache, addressType: 1)),
            ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(again[2]?.integer == 1 && again[3]?.integer == 247)
    }

    @Test func aFailedConnectAnswersTheErrorAndFreesTheEntry() throws {
        var table = ESPHomeConnectionTable()
        _ = table.request(.device(address: Self.device, kind: .connectWithoutCache, addressType: 0))
        let actions = table.report(.ended(error: ESPHomeBluetoothError.failedToEstablish), from: Self.device)
        let answer = try Self.reply(actions, ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(answer[2] == nil && answer[4]?.integer == UInt64(ESPHomeBluetoothError.failedToEstablish))
        #expect(actions.contains(.connectionsFree))
        #expect(table.isEmpty)
    }

    @Test func operationsMapToTheConnectionAndTheirResultsToTheAnswers() throws {
        var table = ESPHomeConnectionTable()
        Self.connected(&table)
        let address = Self.device
        #expect(table.request(.getServices(address: address)) == [.perform(address: address, .services)])
        #expect(table.request(.read(address: address, handle: 3)) == [.perform(address: address, .read(handle: 3))])
        #expect(
            table.request(.write(address: address, handle: 9, withResponse: true, data: [1]))
                == [.perform(address: address, .write(handle: 9, value: [1], withResponse: true))])
        #expect(
            table.request(.writeDescriptor(address: address, handle: 10, data: [1, 0]))
                == [.perform(address: address, .writeDescriptor(handle: 10, value: [1, 0]))])
        #expect(
            table.request(.readDescriptor(address: address, handle: 10))
                == [.perform(address: address, .readDescriptor(handle: 10))])

        let service = ESPHomeServiceListing(
            GATTService(uuid: .uuid16(0x180F), handle: 1, endHandle: 4),
            characteristics: [
                .init(
                    GATTCharacteristic(
                        uuid: .uuid16(0x2A19), declarationHandle: 2, valueHandle: 3, properties: [.read, .notify],
                        endHandle: 4),
                    descriptors: [GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 4)])
            ])
        let services = table.report(.services([service, service]), from: address)
        #expect(services.count == 3)
        #expect(
            services.last
                == .reply(
                    type: ESPHomeMessageType.bluetoothGATTGetServicesDoneResponse,
                    body: ESPHomeServerMessage.servicesDone(address: address)))
        let read = try Self.reply(
            table.report(.value(handle: 3, [87]), from: address), ESPHomeMessageType.bluetoothGATTReadResponse)
        #expect(read[2]?.integer == 3 && read[3] == .bytes([87][...]))
        let written = try Self.reply(
            table.report(.written(handle: 9), from: address), ESPHomeMessageType.bluetoothGATTWriteResponse)
        #expect(written[2]?.integer == 9)
        let failed = try Self.reply(
            table.report(.failed(handle: 10, error: 0x03), from: address), ESPHomeMessageType.bluetoothGATTErrorResponse
        )
        #expect(failed[2]?.integer == 10 && failed[3]?.integer == 3)
        // A write without response is not answered when it went out.
        _ = table.request(.write(address: address, handle: 9, withResponse: false, data: [2]))
        #expect(table.report(.sent(handle: 9), from: address).isEmpty)
    }

    @Test func notificationsAreForwardedOnlyForTheHandlesTheClientAskedFor() throws {
        var table = ESPHomeConnectionTable()
        Self.connected(&table)
        #expect(table.report(.notification(handle: 9, [1]), from: Self.device).isEmpty)
        let on = try Self.reply(
            table.request(.notify(address: Self.device, handle: 9, enable: true)),
            ESPHomeMessageType.bluetoothGATTNotifyResponse)
        #expect(on[2]?.integer == 9)
        let data = try Self.reply(
            table.report(.notification(handle: 9, [0xCA, 0xFE]), from: Self.device),
            ESPHomeMessageType.bluetoothGATTNotifyDataResponse)
        #expect(data[2]?.integer == 9 && data[3] == .bytes([0xCA, 0xFE][...]))
        #expect(table.report(.notification(handle: 12, [1]), from: Self.device).isEmpty)
        _ = table.request(.notify(address: Self.device, handle: 9, enable: false))
        #expect(table.report(.notification(handle: 9, [1]), from: Self.device).isEmpty)
    }

    @Test func requestsForADeviceNotHeldGetNotConnectedAndNoOperation() throws {
        var table = ESPHomeConnectionTable()
        let requests: [ESPHomeConnectionRequest] = [
            .getServices(address: Self.other), .read(address: Self.other, handle: 3),
            .write(address: Self.other, handle: 3, withResponse: true, data: [1]),
            .readDescriptor(address: Self.other, handle: 4), .writeDescriptor(address: Self.other, handle: 4, data: []),
            .notify(address: Self.other, handle: 3, enable: true),
        ]
        // Neither held, nor still connecting: no operation reaches a device.
        _ = table.request(.device(address: Self.device, kind: .connectWithoutCache, addressType: 0))
        for request in requests + requests.map(\.retargeted) {
            let actions = table.request(request)
            let answer = try Self.reply(actions, ESPHomeMessageType.bluetoothGATTErrorResponse)
            #expect(answer[3]?.integer == UInt64(ESPHomeBluetoothError.notConnected), "\(request)")
            #expect(!actions.contains { if case .perform = $0 { true } else { false } }, "\(request)")
        }
        // A disconnect of a device not held is answered as done.
        let done = try Self.reply(
            table.request(.device(address: Self.other, kind: .disconnect, addressType: nil)),
            ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(done[2] == nil && done[4] == nil)
        // Reports for an address the table does not hold produce no answer.
        #expect(table.report(.value(handle: 3, [1]), from: Self.other).isEmpty)
        #expect(table.report(.ended(error: 0), from: Self.other) == [.connectionsFree])
    }

    @Test func boundsPerClientAndPerConnection() throws {
        var table = ESPHomeConnectionTable(limits: .init(connectionsPerClient: 2, pendingPerConnection: 2))
        _ = table.request(.device(address: 1, kind: .connectWithoutCache, addressType: 0))
        _ = table.request(.device(address: 2, kind: .connectWithoutCache, addressType: 0))
        let third = try Self.reply(
            table.request(.device(address: 3, kind: .connectWithoutCache, addressType: 0)),
            ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(third[4]?.integer == UInt64(ESPHomeBluetoothError.noResources))
        _ = table.report(.connected(mtu: 23), from: 1)
        #expect(table.request(.read(address: 1, handle: 3)).count == 1)
        #expect(table.request(.read(address: 1, handle: 3)).count == 1)
        let refused = try Self.reply(
            table.request(.read(address: 1, handle: 3)), ESPHomeMessageType.bluetoothGATTErrorResponse)
        #expect(refused[3]?.integer == UInt64(ESPHomeBluetoothError.noResources))
        // An answer frees a place.
        _ = table.report(.value(handle: 3, [1]), from: 1)
        #expect(table.request(.read(address: 1, handle: 3)) == [.perform(address: 1, .read(handle: 3))])
    }

    @Test func disconnectClosesAndIsAnsweredWhenTheLinkHasEnded() throws {
        var table = ESPHomeConnectionTable()
        Self.connected(&table)
        #expect(
            table.request(.device(address: Self.device, kind: .disconnect, addressType: nil)) == [
                .close(address: Self.device)
            ])
        // Twice: once is enough.
        #expect(table.request(.device(address: Self.device, kind: .disconnect, addressType: nil)).isEmpty)
        // While disconnecting, operations are refused.
        let refused = try Self.reply(
            table.request(.read(address: Self.device, handle: 3)), ESPHomeMessageType.bluetoothGATTErrorResponse)
        #expect(refused[3]?.integer == UInt64(ESPHomeBluetoothError.notConnected))
        // The link ended with whatever error: the client asked, so the answer carries none.
        let actions = table.report(.ended(error: ESPHomeBluetoothError.terminatedByDevice), from: Self.device)
        let answer = try Self.reply(actions, ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(answer[2] == nil && answer[4] == nil)
        #expect(table.isEmpty)
    }

    @Test func aPeerDisconnectIsReportedWithItsError() throws {
        var table = ESPHomeConnectionTable()
        Self.connected(&table)
        _ = table.request(.notify(address: Self.device, handle: 9, enable: true))
        let answer = try Self.reply(
            table.report(.ended(error: ESPHomeBluetoothError.terminatedByDevice), from: Self.device),
            ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(answer[2] == nil && answer[4]?.integer == UInt64(ESPHomeBluetoothError.terminatedByDevice))
        #expect(table.report(.notification(handle: 9, [1]), from: Self.device).isEmpty)
    }

    @Test func aLinkThatComesUpAfterTheClientGaveUpIsClosed() {
        var table = ESPHomeConnectionTable()
        _ = table.request(.device(address: Self.device, kind: .connectWithoutCache, addressType: 0))
        #expect(
            table.request(.device(address: Self.device, kind: .disconnect, addressType: nil)) == [
                .close(address: Self.device)
            ])
        #expect(table.report(.connected(mtu: 247), from: Self.device) == [.close(address: Self.device)])
    }

    @Test func closeAllClosesEveryConnectionOfTheClient() {
        var table = ESPHomeConnectionTable()
        Self.connected(&table, 1)
        _ = table.request(.device(address: 2, kind: .connectWithoutCache, addressType: 0))
        #expect(table.closeAll() == [.close(address: 1), .close(address: 2)])
        #expect(table.isEmpty)
        #expect(table.report(.ended(error: 0), from: 1) == [.connectionsFree])
    }

    @Test func pairingAndCacheClearingAreRefusedWithTheirOwnAnswers() throws {
        var table = ESPHomeConnectionTable()
        let pair = try Self.reply(
            table.request(.device(address: Self.device, kind: .pair, addressType: nil)),
            ESPHomeMessageType.bluetoothDevicePairingResponse)
        #expect(pair[2] == nil && pair[3]?.integer == UInt64(ESPHomeBluetoothError.notAvailable))
        _ = try Self.reply(
            table.request(.device(address: Self.device, kind: .unpair, addressType: nil)),
            ESPHomeMessageType.bluetoothDeviceUnpairingResponse)
        _ = try Self.reply(
            table.request(.device(address: Self.device, kind: .clearCache, addressType: nil)),
            ESPHomeMessageType.bluetoothDeviceClearCacheResponse)
        let unknown = try Self.reply(
            table.request(.device(address: Self.device, kind: .unknown(99), addressType: nil)),
            ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(unknown[4]?.integer == UInt64(ESPHomeBluetoothError.notAvailable))
        #expect(table.isEmpty)
    }
}

extension ESPHomeConnectionRequest {
    /// The same request for `ESPHomeConnectionTableTests.device` (connecting, not yet connected).
    fileprivate var retargeted: ESPHomeConnectionRequest {
        let device = ESPHomeConnectionTableTests.device
        switch self {
        case .device(_, let kind, let type): return .device(address: device, kind: kind, addressType: type)
        case .getServices: return .getServices(address: device)
        case let .read(_, handle): return .read(address: device, handle: handle)
        case let .write(_, handle, response, data):
            return .write(address: device, handle: handle, withResponse: response, data: data)
        case let .readDescriptor(_, handle): return .readDescriptor(address: device, handle: handle)
        case let .writeDescriptor(_, handle, data): return .writeDescriptor(address: device, handle: handle, data: data)
        case let .notify(_, handle, enable): return .notify(address: device, handle: handle, enable: enable)
        }
    }
}

/// The session with active connections: flags, requests handed to the server, the slot subscription.
@Suite struct ESPHomeActiveSessionTests {
    static func frame(_ type: UInt32, _ body: [UInt8] = []) -> [UInt8] {
        var out: [UInt8] = []
        ESPHomeFrameEncoder.plaintext(type: type, body: body, into: &out)
        return out
    }

    static func session(active: Bool) -> ESPHomeSession {
        var identity = ESPHomeDeviceIdentity(
            name: "hall-pi", friendlyName: "Hall", macAddress: "02:11:22:33:44:55",
            bluetoothMACAddress: "02:11:22:33:44:55", version: "0.1.0", usesPassword: false)
        identity.activeConnections = active
        return ESPHomeSession(configuration: .init(identity: identity))
    }

    static func flags(_ session: inout ESPHomeSession) throws -> UInt64 {
        var decoder = ESPHomeFrameDecoder(framing: .plaintext)
        for case let .send(bytes) in session.receive(frame(1) + frame(9)) { decoder.append(bytes) }
        _ = try decoder.next()
        let info = try #require(try decoder.next())
        #expect(info.type == ESPHomeMessageType.deviceInfoResponse)
        return try ESPHomeConnectionTableTests.fields(info.body)[15]?.integer ?? 0
    }

    @Test func flagsSayActiveConnectionsAndRemoteCachingOnlyWhenActive() throws {
        var active = Self.session(active: true)
        #expect(try Self.flags(&active) == 0b10_0111)
        var passive = Self.session(active: false)
        #expect(try Self.flags(&passive) == 0b10_0001)
    }

    @Test func requestsGoToTheServerAndTheSlotSubscriptionIsKept() throws {
        var session = Self.session(active: true)
        _ = session.receive(Self.frame(1))
        #expect(!session.wantsConnectionsFree)
        #expect(
            session.receive(Self.frame(ESPHomeMessageType.subscribeBluetoothConnectionsFreeRequest)) == [
                .connectionsFree
            ])
        #expect(session.wantsConnectionsFree)
        var w = ProtobufWriter()
        w.uint(1, ESPHomeConnectionTableTests.device)
        w.uint(2, 5)
        w.bool(3, true)
        w.uint(4, 1)
        #expect(
            session.receive(Self.frame(ESPHomeMessageType.bluetoothDeviceRequest, w.bytes)) == [
                .bluetooth(
                    .device(address: ESPHomeConnectionTableTests.device, kind: .connectWithoutCache, addressType: 1))
            ])
    }
}
