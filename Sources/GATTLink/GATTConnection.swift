import BeaconRuntime
import DeviceProtocols

/// One GATT connection: `GATTClient` (the core's state machine) driven over an ATT channel. Each call submits a
/// procedure and runs the client until it completes: PDUs out through the socket, PDUs in from it, the
/// client's timer (`nextDeadline`) as the `poll` timeout, `.closeBearer` closing the socket. Every wait is
/// bounded by the client's request timeout, so a peer that stalls ends the call with a timeout and a peer that
/// floods notifications cannot keep it from timing out.
///
/// The connection holds its slot (`ConnectionSlots`) until `close()` or deinit, whichever comes first: a slot is
/// never left taken by a connection that is gone. Not Sendable: used by one thread (a command, or a
/// connection's own thread) at a time.
public final class GATTConnection {
    /// A notification or indication (already confirmed) from the peer.
    public struct Notification: Sendable, Equatable {
        public var handle: UInt16
        public var value: [UInt8]
        public var isIndication: Bool
        public init(handle: UInt16, value: [UInt8], isIndication: Bool) {
            self.handle = handle
            self.value = value
            self.isIndication = isIndication
        }
    }

    public let socket: L2CAPSocket
    public private(set) var client: GATTClient
    /// The device, for messages.
    public var peer: String { socket.peer }
    /// Called with each notification and indication as it arrives (during any call).
    public var onNotification: ((Notification) -> Void)?
    /// Peer PDUs that belonged to no request (malformed notifications, unsolicited responses): counted, the
    /// last few kept for diagnostics.
    public private(set) var unsolicitedCount = 0
    public private(set) var lastUnsolicited: [GATTError] = []
    /// Services and characteristics found so far (`GATTConnection+Characteristics`).
    var services: [GATTService]?
    var characteristicsByService: [GATTService: [GATTCharacteristic]] = [:]

    private var slot: ConnectionSlot?
    private let clock: @Sendable () -> Double
    /// Why the channel closed under the client: its errno (0: orderly close), nil while open.
    private var closedErrno: Int32?

    /// Runs a client over `socket`. `requestTimeout` is the ATT transaction timeout (30 s by default, shorter in
    /// tests); `clock` a monotonic clock in seconds.
    public init(
        socket: L2CAPSocket, slot: consuming ConnectionSlot? = nil, preferredMTU: Int = 247,
        requestTimeout: Double = GATTClient.defaultRequestTimeout,
        clock: @escaping @Sendable () -> Double = { SystemClock.monotonic() }
    ) {
        self.socket = socket
        self.slot = slot
        self.client = GATTClient(preferredMTU: preferredMTU, requestTimeout: requestTimeout)
        self.clock = clock
    }

    /// Closes the channel and frees the slot. Idempotent.
    public func close() {
        socket.close()
        slot = nil
    }

    /// Whether `close()` ran or the channel went down.
    public var isClosed: Bool { socket.fd < 0 || client.isClosed }

    /// Runs one procedure to its end. Throws `.gatt(error)` (which names the GATT step) when it failed,
    /// `.disconnected` with the errno when the channel went down under it.
    @discardableResult
    public func perform(_ procedure: GATTProcedure, step: String? = nil) throws(GATTLinkError) -> GATTResult {
        let name = step ?? procedure.step.rawValue
        var outcome: Result<GATTResult, GATTError>?
        apply(client.handle(.submit(procedure, at: clock())), waitingFor: procedure, outcome: &outcome)
        // Bounded: each pass either ends the procedure, or waits for a PDU or the deadline; the client fails
        // the request at its deadline, and a tick is given after every PDU once the deadline has passed.
        while outcome == nil {
            guard client.nextDeadline != nil else {
                // Nothing outstanding and no outcome: the client was closed under the procedure.
                throw linkError(.disconnected(procedure.step), step: name)
            }
            pump(waitingFor: procedure, outcome: &outcome, until: nil)
        }
        switch outcome {
        case .success(let result): return result
        case .failure(let error): throw linkError(error, step: name)
        case nil: throw linkError(.disconnected(procedure.step), step: name)
        }
    }

    /// Receives until `deadline` (monotonic seconds) or until `enough()` says so after a notification; answers
    /// the peer's requests meanwhile. Throws `.disconnected` when the channel goes down first.
    public func waitForNotifications(until deadline: Double, enough: () -> Bool) throws(GATTLinkError) {
        var outcome: Result<GATTResult, GATTError>?
        while !enough() {
            guard clock() < deadline else { return }
            guard !isClosed else { throw linkError(.disconnected(.unsolicited), step: "notifications") }
            pump(waitingFor: nil, outcome: &outcome, until: deadline)
        }
    }

    /// One wait: a PDU, the end of the channel or the timer, each handed to the client and its actions performed.
    private func pump(
        waitingFor procedure: GATTProcedure?, outcome: inout Result<GATTResult, GATTError>?, until: Double?
    ) {
        let now = clock()
        var wakeAt = client.nextDeadline ?? until ?? now
        if let until { wakeAt = min(wakeAt, until) }
        let milliseconds = Int32(min(max(0, wakeAt - now) * 1000, 60_000).rounded(.up))
        switch socket.receive(timeoutMilliseconds: milliseconds) {
        case .pdu(let bytes):
            apply(client.handle(.received(bytes, at: clock())), waitingFor: procedure, outcome: &outcome)
        case .timeout:
            break
        case .closed(let code):
            closedErrno = code
            socket.close()
            apply(client.handle(.disconnected), waitingFor: procedure, outcome: &outcome)
            return
        }
        if let deadline = client.nextDeadline, clock() >= deadline {
            apply(client.handle(.tick(at: clock())), waitingFor: procedure, outcome: &outcome)
        }
    }

    private func apply(
        _ actions: [GATTClientAction], waitingFor procedure: GATTProcedure?,
        outcome: inout Result<GATTResult, GATTError>?
    ) {
        for action in actions {
            switch action {
            case .send(let pdu):
                if let code = socket.send(pdu.encode()) {
                    closedErrno = code
                    socket.close()
                    apply(client.handle(.disconnected), waitingFor: procedure, outcome: &outcome)
                    return
                }
            case .completed(let done, let result):
                if done == procedure, outcome == nil { outcome = .success(result) }
            case .failed(let failed, let error):
                if let failed {
                    if failed == procedure, outcome == nil { outcome = .failure(error) }
                } else {
                    unsolicitedCount += 1
                    lastUnsolicited = Array((lastUnsolicited + [error]).suffix(4))
                }
            case .notification(let handle, let value):
                onNotification?(Notification(handle: handle, value: value, isIndication: false))
            case .indication(let handle, let value):
                onNotification?(Notification(handle: handle, value: value, isIndication: true))
            case .closeBearer:
                socket.close()
            }
        }
    }

    /// The link error for a GATT error: a disconnect caused by the channel carries its errno.
    private func linkError(_ error: GATTError, step: String) -> GATTLinkError {
        if case .disconnected = error {
            return GATTLinkError(.disconnected, peer: peer, step: step, errno: closedErrno ?? 0)
        }
        return GATTLinkError(.gatt(error), peer: peer, step: step)
    }
}
