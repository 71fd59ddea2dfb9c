/// One client connection of the ESPHome native API server, as a state machine without I/O: the server feeds
/// the bytes it read (`receive`) and performs the returned actions (send bytes, close with a reason); it asks
/// for advertisement frames with `frames(for:)` while `isSubscribed`.
///
/// Order enforced (as ESPHome's own server): Hello first; with a password, Connect with the right password
/// before anything but Ping, DeviceInfo and Disconnect; with a key, the Noise handshake before any message.
/// Any violation, a malformed or oversized frame closes the connection with the reason.
public struct ESPHomeSession: Sendable {
    public struct Configuration: Sendable {
        public var identity: ESPHomeDeviceIdentity
        /// The API password (`ConnectRequest`), nil for none.
        public var password: String?
        /// The 32-byte Noise pre-shared key, nil for the plaintext framing.
        public var psk: [UInt8]?
        public var maxFrameSize: Int
        /// At most this many advertisements in one `BluetoothLERawAdvertisementsResponse`.
        public var advertisementsPerMessage: Int

        public init(
            identity: ESPHomeDeviceIdentity, password: String? = nil, psk: [UInt8]? = nil,
            maxFrameSize: Int = 16 * 1024, advertisementsPerMessage: Int = 16
        ) {
            self.identity = identity
            self.password = password
            self.psk = psk
            self.maxFrameSize = maxFrameSize
            self.advertisementsPerMessage = advertisementsPerMessage
        }
    }

    public enum Action: Equatable, Sendable {
        case send([UInt8])
        /// Close after sending what the earlier actions queued; `reason` is logged, nil for a normal end.
        case close(reason: ESPHomeProtocolError?)
        /// With active connections (`identity.activeConnections`): a connection request for the server's
        /// `ESPHomeConnectionTable` of this client.
        case bluetooth(ESPHomeConnectionRequest)
        /// With active connections: send this client the slot count of the daemon's pool (it subscribed).
        case connectionsFree
    }

    package enum Phase: Equatable { case awaitingHello, awaitingConnect, authenticated, closed }
    enum NoisePhase { case clientHello, handshake, ready }

    public let configuration: Configuration
    private let crypto: (any NoiseCryptoProvider)?
    private var decoder: ESPHomeFrameDecoder
    private(set) var phase: Phase = .awaitingHello
    private var noisePhase: NoisePhase = .clientHello
    private var receiveCipher: NoiseCipherState?
    private var sendCipher: NoiseCipherState?
    /// The client subscribed to raw advertisements.
    public private(set) var isSubscribed = false
    /// The client subscribed to the connection slot count (`SubscribeBluetoothConnectionsFreeRequest`).
    public private(set) var wantsConnectionsFree = false
    /// The client's `client_info` from its Hello (for logs).
    public private(set) var clientInfo = ""

    /// `crypto` is required when `configuration.psk` is set.
    public init(configuration: Configuration, crypto: (any NoiseCryptoProvider)? = nil) {
        precondition(configuration.psk == nil || crypto != nil, "encryption needs a crypto provider")
        self.configuration = configuration
        self.crypto = crypto
        decoder = ESPHomeFrameDecoder(
            framing: configuration.psk == nil ? .plaintext : .noise,
            maxFrameSize: configuration.maxFrameSize)
    }

    public var isClosed: Bool { phase == .closed }

    /// Hello (and, with a password, Connect) done: the client may subscribe.
    public var isEstablished: Bool { phase == .authenticated }

    /// Feeds bytes read from the socket.
    public mutating func receive<C: Collection>(_ bytes: C) -> [Action] where C.Element == UInt8 {
        guard phase != .closed else { return [] }
        decoder.append(bytes)
        var actions: [Action] = []
        do {
            while phase != .closed, let frame = try decoder.next() {
                if configuration.psk == nil {
                    try handle(type: frame.type, body: frame.body[...], into: &actions)
                } else {
                    try handleNoise(frame.body, into: &actions)
                }
            }
        } catch {
            if configuration.psk != nil, noisePhase == .clientHello, case .malformedFrame = error {
                // A plaintext client: tell it (aioesphomeapi reports "requires encryption" on an 0x01 frame).
                var out: [UInt8] = []
                ESPHomeFrameEncoder.noise(payload: [0x01] + Array("Bad indicator byte".utf8), into: &out)
                actions.append(.send(out))
            }
            actions.append(.close(reason: error))
            phase = .closed
        }
        return actions
    }

    /// Frames of `BluetoothLERawAdvertisementsResponse` messages for a batch (empty unless subscribed).
    public mutating func frames(for advertisements: [ESPHomeRawAdvertisement]) -> [UInt8] {
        guard isSubscribed, phase == .authenticated, !advertisements.isEmpty else { return [] }
        var out: [UInt8] = []
        var start = 0
        while start < advertisements.count {
            let end = min(start + max(1, configuration.advertisementsPerMessage), advertisements.count)
            let body = ESPHomeServerMessage.rawAdvertisements(advertisements[start..<end])
            guard
                (try? append(type: ESPHomeMessageType.bluetoothLERawAdvertisementsResponse, body: body, to: &out))
                    != nil
            else { return out }
            start = end
        }
        return out
    }

    /// A framed (and, with a key, encrypted) message, e.g. the server's own Ping.
    public mutating func frame(type: UInt32, body: [UInt8]) -> [UInt8]? {
        guard phase != .closed, configuration.psk == nil || noisePhase == .ready else { return nil }
        var out: [UInt8] = []
        return (try? append(type: type, body: body, to: &out)) == nil ? nil : out
    }

    private mutating func append(type: UInt32, body: [UInt8], to out: inout [UInt8]) throws(ESPHomeProtocolError) {
        guard configuration.psk != nil else {
            ESPHomeFrameEncoder.plaintext(type: type, body: body, into: &out)
            return
        }
        guard var cipher = sendCipher else { throw .outOfOrder("message before the handshake") }
        guard body.count <= 0xFFFF - 4 - 16 else { throw .oversizedFrame(body.count) }
        let sealed = try cipher.encrypt(ESPHomeFrameEncoder.noisePlaintext(type: type, body: body))
        sendCipher = cipher
        ESPHomeFrameEncoder.noise(payload: sealed, into: &out)
    }

    private mutating func handleNoise(_ payload: [UInt8], into actions: inout [Action]) throws(ESPHomeProtocolError) {
        switch noisePhase {
        case .clientHello:
            // The client's hello frame is empty (a future protocol list); reply with the chosen protocol
            // (0x01), the node name and the MAC, each ended by a zero byte.
            noisePhase = .handshake
            var hello: [UInt8] = [0x01]
            hello += Array(configuration.identity.name.utf8) + [0]
            hello += Array(configuration.identity.macAddress.utf8) + [0]
            var out: [UInt8] = []
            ESPHomeFrameEncoder.noise(payload: hello, into: &out)
            actions.append(.send(out))
        case .handshake:
            guard let crypto, let psk = configuration.psk else { throw .handshake("no key") }
            guard payload.first == 0x00 else { throw .handshake("handshake frame without the 0x00 prefix") }
            var handshake = NoiseHandshake(psk: psk, crypto: crypto)
            do {
                let result = try handshake.respond(to: Array(payload.dropFirst()))
                receiveCipher = result.receive
                sendCipher = result.send
                noisePhase = .ready
                var out: [UInt8] = []
                ESPHomeFrameEncoder.noise(payload: [0x00] + result.reply, into: &out)
                actions.append(.send(out))
            } catch {
                // The client shows "Invalid encryption key" for exactly this text.
                var out: [UInt8] = []
                let text = error == .handshake("Handshake MAC failure") ? "Handshake MAC failure" : "Handshake error"
                ESPHomeFrameEncoder.noise(payload: [0x01] + Array(text.utf8), into: &out)
                actions.append(.send(out))
                throw error
            }
        case .ready:
            guard var cipher = receiveCipher else { throw .outOfOrder("no session key") }
            let plain = try cipher.decrypt(payload)
            receiveCipher = cipher
            let (type, body) = try ESPHomeFrameEncoder.parseNoisePlaintext(plain)
            try handle(type: type, body: body, into: &actions)
        }
    }

    private mutating func reply(_ type: UInt32, _ body: [UInt8], into actions: inout [Action])
        throws(ESPHomeProtocolError)
    {
        var out: [UInt8] = []
        try append(type: type, body: body, to: &out)
        actions.append(.send(out))
    }

    private mutating func handle(type: UInt32, body: ArraySlice<UInt8>, into actions: inout [Action])
        throws(ESPHomeProtocolError)
    {
        let message = try ESPHomeClientMessage.decode(type: type, body: body)
        let identity = configuration.identity
        switch (phase, message) {
        case (.awaitingHello, let .hello(info, _, _)):
            clientInfo = String(info.prefix(64))
            phase = configuration.password == nil ? .authenticated : .awaitingConnect
            try reply(
                ESPHomeMessageType.helloResponse, ESPHomeServerMessage.helloResponse(identity: identity), into: &actions
            )
        case (.awaitingHello, _):
            throw .outOfOrder("message type \(type) before Hello")
        case (_, .hello):
            throw .outOfOrder("a second Hello")
        case (_, let .connect(password)):
            let valid = configuration.password.map { constantTimeEqual($0, password) } ?? true
            try reply(
                ESPHomeMessageType.connectResponse, ESPHomeServerMessage.connectResponse(invalidPassword: !valid),
                into: &actions)
            if valid {
                phase = .authenticated
            } else {
                actions.append(.close(reason: .outOfOrder("invalid password")))
                phase = .closed
            }
        case (_, .pingRequest):
            try reply(ESPHomeMessageType.pingResponse, [], into: &actions)
        case (_, .pingResponse), (_, .getTimeResponse), (_, .unknown):
            break
        case (_, .deviceInfoRequest):
            try reply(
                ESPHomeMessageType.deviceInfoResponse, ESPHomeServerMessage.deviceInfoResponse(identity: identity),
                into: &actions)
        case (_, .disconnectRequest):
            try reply(ESPHomeMessageType.disconnectResponse, [], into: &actions)
            actions.append(.close(reason: nil))
            phase = .closed
        case (_, .disconnectResponse):
            actions.append(.close(reason: nil))
            phase = .closed
        case (.awaitingConnect, _):
            throw .outOfOrder("message type \(type) before Connect")
        case (_, .listEntitiesRequest):
            try reply(ESPHomeMessageType.listEntitiesDoneResponse, [], into: &actions)
        case (_, .subscription):
            break
        case (_, .subscribeAdvertisements(let flags)):
            // Only raw advertisements are offered (the feature flags say so); a parsed-advertisement
            // subscription (flags 0, older clients) gets nothing rather than a format this proxy does not send.
            isSubscribed = flags & 1 != 0
        case (_, .unsubscribeAdvertisements):
            isSubscribed = false
        case (_, .subscribeConnectionsFree):
            if identity.activeConnections {
                wantsConnectionsFree = true
                actions.append(.connectionsFree)
            } else {
                try reply(
                    ESPHomeMessageType.bluetoothConnectionsFreeResponse, ESPHomeServerMessage.connectionsFree(),
                    into: &actions)
            }
        case (_, .connection(let request)):
            if identity.activeConnections {
                actions.append(.bluetooth(request))
            } else {
                try refuse(request, into: &actions)
            }
        }
    }

    /// Without active connections (the feature flags say so, so Home Assistant does not ask): a client
    /// that asks anyway gets the answer it waits for, with `notAvailable`, instead of a silence it would time
    /// out on.
    private mutating func refuse(_ request: ESPHomeConnectionRequest, into actions: inout [Action])
        throws(ESPHomeProtocolError)
    {
        let error = ESPHomeBluetoothError.notAvailable
        switch request {
        case let .device(address, kind, _):
            switch kind {
            case .pair:
                try reply(
                    ESPHomeMessageType.bluetoothDevicePairingResponse,
                    ESPHomeServerMessage.pairing(address: address, done: false, error: error), into: &actions)
            case .unpair:
                try reply(
                    ESPHomeMessageType.bluetoothDeviceUnpairingResponse,
                    ESPHomeServerMessage.pairing(address: address, done: false, error: error), into: &actions)
            case .clearCache:
                try reply(
                    ESPHomeMessageType.bluetoothDeviceClearCacheResponse,
                    ESPHomeServerMessage.clearCache(address: address, success: false, error: error), into: &actions)
            case .disconnect:
                try reply(
                    ESPHomeMessageType.bluetoothDeviceConnectionResponse,
                    ESPHomeServerMessage.deviceConnection(address: address, connected: false, mtu: 0, error: 0),
                    into: &actions)
            case .connectV1, .connectWithCache, .connectWithoutCache, .unknown:
                try reply(
                    ESPHomeMessageType.bluetoothDeviceConnectionResponse,
                    ESPHomeServerMessage.deviceConnection(address: address, connected: false, mtu: 0, error: error),
                    into: &actions)
            }
        case let .getServices(address):
            try reply(
                ESPHomeMessageType.bluetoothGATTErrorResponse,
                ESPHomeServerMessage.gattError(address: address, handle: 0, error: error), into: &actions)
        case let .read(address, handle), let .write(address, handle, _, _), let .readDescriptor(address, handle),
            let .writeDescriptor(address, handle, _), let .notify(address, handle, _):
            try reply(
                ESPHomeMessageType.bluetoothGATTErrorResponse,
                ESPHomeServerMessage.gattError(address: address, handle: UInt16(handle), error: error),
                into: &actions)
        }
    }

    private func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
