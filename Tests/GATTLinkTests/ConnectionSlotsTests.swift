import BeaconModel
import GATTLink
import Testing

@Suite struct ConnectionSlotsTests {
    static let devices = (1...4).map { BluetoothAddress(rawValue: 0xC0FF_EE00_0000 + UInt64($0)) }

    @Test func atMostTheLimitAndOnePerDevice() throws {
        let slots = ConnectionSlots()
        #expect(slots.limit == 3)
        let first = try slots.acquire(for: Self.devices[0])
        let second = try slots.acquire(for: Self.devices[1])
        #expect(throws: GATTLinkError(.alreadyConnected, peer: Self.devices[0].description, step: "connection slot")) {
            _ = try slots.acquire(for: Self.devices[0])
        }
        let third = try slots.acquire(for: Self.devices[2])
        #expect(throws: GATTLinkError(.noSlot(limit: 3), peer: Self.devices[3].description, step: "connection slot")) {
            _ = try slots.acquire(for: Self.devices[3])
        }
        #expect(slots.free == 0)
        #expect(Set(slots.devices) == Set(Self.devices.prefix(3)))
        _ = consume second
        #expect(slots.free == 1)
        let fourth = try slots.acquire(for: Self.devices[3])
        #expect(fourth.device == Self.devices[3])
        _ = consume first
        _ = consume third
        _ = consume fourth
        #expect(slots.free == 3)
    }

    @Test func aFailedAcquireTakesNothing() {
        let slots = ConnectionSlots(limit: 1)
        do {
            let held = try slots.acquire(for: Self.devices[0])
            for _ in 0..<100 { _ = try? slots.acquire(for: Self.devices[1]) }
            #expect(slots.free == 0)
            _ = consume held
        } catch {
            Issue.record("\(error)")
        }
        #expect(slots.free == 1)
    }

    @Test func theMessagesSayWhatToDo() {
        let full = GATTLinkError(.noSlot(limit: 3), peer: "AA:BB:CC:DD:EE:FF", step: "connection slot")
        #expect(
            "\(full)"
                == "AA:BB:CC:DD:EE:FF: connection slot: all 3 connection slots are in use; try again when one is free")
        let timeout = GATTLinkError(.connectTimeout(seconds: 20), peer: "AA:BB:CC:DD:EE:FF", step: "connect")
        #expect("\(timeout)".contains("connect timed out after 20.0 s"))
        #expect("\(timeout)".contains("--random"))
    }
}
