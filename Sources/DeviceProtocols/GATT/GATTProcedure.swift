import BeaconModel

/// A GATT procedure the caller asks the client for.
public enum GATTProcedure: Sendable, Hashable {
    /// Exchange MTU with the client's preferred MTU (`GATTClient.preferredMTU`).
    case exchangeMTU
    case discoverPrimaryServices
    case discoverCharacteristics(GATTService)
    case discoverDescriptors(GATTCharacteristic)
    /// Read a value; long values (longer than MTU - 1) continue with Read Blob up to 512 bytes.
    case read(handle: UInt16)
    case write(handle: UInt16, value: [UInt8])
    /// Write Command: no response; completes as soon as it is handed to the caller to send.
    case writeWithoutResponse(handle: UInt16, value: [UInt8])
    /// Write the CCCD at `cccd` (found by descriptor discovery) to turn notifications or indications on or off.
    case subscribe(cccd: UInt16, GATTSubscription)

    public var step: GATTStep {
        switch self {
        case .exchangeMTU: return .exchangeMTU
        case .discoverPrimaryServices: return .discoverServices
        case .discoverCharacteristics: return .discoverCharacteristics
        case .discoverDescriptors: return .discoverDescriptors
        case .read: return .read
        case .write: return .write
        case .writeWithoutResponse: return .writeWithoutResponse
        case .subscribe: return .subscribe
        }
    }
}

/// What a completed procedure produced.
public enum GATTResult: Sendable, Hashable {
    case mtu(Int)
    case services([GATTService])
    case characteristics([GATTCharacteristic])
    case descriptors([GATTDescriptor])
    case value([UInt8])
    case written
}

/// An input to `GATTClient`; time is the caller's clock in seconds.
public enum GATTClientEvent: Sendable, Hashable {
    case submit(GATTProcedure, at: Timestamp)
    /// One ATT PDU as read from the channel.
    case received([UInt8], at: Timestamp)
    /// The caller's timer: at or after `GATTClient.nextDeadline`.
    case tick(at: Timestamp)
    case disconnected
}

/// What the caller does for the client.
public enum GATTClientAction: Sendable, Hashable {
    /// Write this PDU to the ATT channel.
    case send(ATTPDU)
    case completed(GATTProcedure, GATTResult)
    /// A procedure failed; `nil` for a peer PDU that belonged to no procedure (step `.unsolicited`).
    case failed(GATTProcedure?, GATTError)
    case notification(handle: UInt16, value: [UInt8])
    /// The confirmation has already been sent (a `.send(.handleValueConfirmation)` precedes this action).
    case indication(handle: UInt16, value: [UInt8])
    /// The ATT bearer must be closed (after a transaction timeout); nothing more is sent on it.
    case closeBearer(GATTError)
}
