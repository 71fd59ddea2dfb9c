import BeaconModel

/// The client side of GATT over one ATT bearer, as a state machine: events in (procedures submitted, PDUs
/// received, the timer, the link going down), actions out (PDUs to send, results, errors, notifications). The
/// caller performs the I/O and owns the timer (`nextDeadline`).
///
/// One request is outstanding at a time (Core spec Vol 3 Part F 3.3.2); further procedures queue in order and
/// complete in order. Each request has 30 s (3.3.3); a timeout closes the bearer. Every peer PDU is checked
/// against the outstanding request: a response with nothing outstanding, a wrong opcode, handles outside the
/// range or going backwards, a truncated or oversized PDU all end the procedure with a `GATTError`, so a hostile
/// peer can neither trap the client nor keep discovery looping.
public struct GATTClient: Sendable {
    /// The ATT transaction timeout of the Core spec (Vol 3 Part F 3.3.3).
    public static let defaultRequestTimeout: Timestamp = 30
    /// ATT_MTU before any exchange (LE).
    public static let defaultMTU = 23
    /// The longest attribute value (Core spec Vol 3 Part F 3.2.9).
    public static let maximumValueLength = 512

    /// The MTU this side offers in Exchange MTU (its receive buffer).
    public let preferredMTU: Int
    /// How long each request (and each page of a paginated one) waits for its response; 30 s unless a caller
    /// wants less (the spec's value is a maximum: a shorter one only gives up on a slow peer sooner).
    public let requestTimeout: Timestamp
    /// The ATT_MTU in force.
    public private(set) var mtu: Int = GATTClient.defaultMTU
    /// Whether the bearer is closed (disconnected or timed out): every later procedure fails `.disconnected`.
    public private(set) var isClosed = false

    var outstanding: Outstanding?
    package var queue: [GATTProcedure] = []

    /// The request in flight and what it has gathered so far.
    struct Outstanding: Sendable {
        package var procedure: GATTProcedure
        package var requestOpcode: UInt8
        package var deadline: Timestamp
        /// Discovery: the first handle of the next request.
        var nextStart: UInt16 = 0
        package var services: [GATTService] = []
        package var characteristics: [GATTCharacteristic] = []
        package var descriptors: [GATTDescriptor] = []
        package var value: [UInt8] = []
    }

    public init(preferredMTU: Int = 247, requestTimeout: Timestamp = GATTClient.defaultRequestTimeout) {
        precondition((23...517).contains(preferredMTU), "ATT_MTU is 23...517")
        precondition(requestTimeout > 0 && requestTimeout <= GATTClient.defaultRequestTimeout, "0 < timeout <= 30 s")
        self.preferredMTU = preferredMTU
        self.requestTimeout = requestTimeout
    }

    /// When the caller must deliver `.tick`: the outstanding request's deadline.
    public var nextDeadline: Timestamp? { outstanding?.deadline }

    /// Procedures waiting behind the outstanding one.
    public var queuedCount: Int { queue.count }

    public mutating func handle(_ event: GATTClientEvent) -> [GATTClientAction] {
        switch event {
        case .submit(let procedure, let now): return submit(procedure, now: now)
        case .received(let bytes, let now): return receive(bytes, now: now)
        case .tick(let now): return tick(now: now)
        case .disconnected: return close(GATTError.disconnected)
        }
    }

    private mutating func submit(_ procedure: GATTProcedure, now: Timestamp) -> [GATTClientAction] {
        guard !isClosed else { return [.failed(procedure, .disconnected(procedure.step))] }
        switch procedure {
        case .writeWithoutResponse(let handle, let value):
            // A command is not a request: it does not wait for the outstanding one.
            guard value.count <= mtu - 3 else {
                return [.failed(procedure, .valueTooLong(procedure.step, length: value.count, maximum: mtu - 3))]
            }
            return [.send(.writeCommand(handle: handle, value: value)), .completed(procedure, .written)]
        default:
            queue.append(procedure)
            return outstanding == nil ? startNext(now: now) : []
        }
    }

    private mutating func tick(now: Timestamp) -> [GATTClientAction] {
        guard let current = outstanding, now >= current.deadline else { return [] }
        let error = GATTError.timeout(current.procedure.step)
        outstanding = nil
        var actions: [GATTClientAction] = [.failed(current.procedure, error), .closeBearer(error)]
        actions += close(GATTError.disconnected)
        return actions
    }

    private mutating func close(_ error: (GATTStep) -> GATTError) -> [GATTClientAction] {
        isClosed = true
        var actions: [GATTClientAction] = []
        if let current = outstanding { actions.append(.failed(current.procedure, error(current.procedure.step))) }
        outstanding = nil
        for procedure in queue { actions.append(.failed(procedure, error(procedure.step))) }
        queue.removeAll()
        return actions
    }

    /// Starts queued procedures until one sends a request (some complete at once, e.g. an empty descriptor range).
    mutating func startNext(now: Timestamp) -> [GATTClientAction] {
        var actions: [GATTClientAction] = []
        while outstanding == nil, !queue.isEmpty {
            let procedure = queue.removeFirst()
            let request: ATTPDU
            var current = Outstanding(procedure: procedure, requestOpcode: 0, deadline: now + requestTimeout)
            switch procedure {
            case .exchangeMTU:
                request = .exchangeMTURequest(clientRxMTU: UInt16(preferredMTU))
            case .discoverPrimaryServices:
                request = .readByGroupTypeRequest(start: 0x0001, end: 0xFFFF, type: .primaryService)
                current.nextStart = 0x0001
            case .discoverCharacteristics(let service):
                guard service.handle <= service.endHandle else {
                    actions.append(.completed(procedure, .characteristics([])))
                    continue
                }
                request = .readByTypeRequest(start: service.handle, end: service.endHandle, type: .characteristic)
                current.nextStart = service.handle
            case .discoverDescriptors(let characteristic):
                guard characteristic.valueHandle < characteristic.endHandle else {
                    actions.append(.completed(procedure, .descriptors([])))
                    continue
                }
                current.nextStart = characteristic.valueHandle + 1
                request = .findInformationRequest(start: current.nextStart, end: characteristic.endHandle)
            case .read(let handle):
                request = .readRequest(handle: handle)
            case .write(let handle, let value):
                // Checked when sent, so an MTU exchange queued before the write counts.
                guard value.count <= mtu - 3 else {
                    let error = GATTError.valueTooLong(procedure.step, length: value.count, maximum: mtu - 3)
                    actions.append(.failed(procedure, error))
                    continue
                }
                request = .writeRequest(handle: handle, value: value)
            case .subscribe(let cccd, let subscription):
                request = .writeRequest(handle: cccd, value: subscription.cccdValue)
            case .writeWithoutResponse:
                continue  // never queued
            }
            current.requestOpcode = request.opcode
            outstanding = current
            actions.append(.send(request))
        }
        return actions
    }

    /// Sends the next request of a paginated or long procedure, with a fresh deadline.
    mutating func continueWith(_ request: ATTPDU, _ current: Outstanding, now: Timestamp) -> [GATTClientAction] {
        var next = current
        next.requestOpcode = request.opcode
        next.deadline = now + requestTimeout
        outstanding = next
        return [.send(request)]
    }

    /// Ends the outstanding procedure and starts the next queued one.
    mutating func finish(_ current: Outstanding, _ outcome: Result<GATTResult, GATTError>, now: Timestamp)
        -> [GATTClientAction]
    {
        outstanding = nil
        var actions: [GATTClientAction]
        switch outcome {
        case .success(let result): actions = [.completed(current.procedure, result)]
        case .failure(let error): actions = [.failed(current.procedure, error)]
        }
        actions += startNext(now: now)
        return actions
    }

    mutating func setMTU(_ value: Int) { mtu = value }
}
