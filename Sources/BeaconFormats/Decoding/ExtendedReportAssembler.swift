import BeaconModel

/// Joins the fragments of extended advertising data that a controller delivers in several LE Extended
/// Advertising Reports ("incomplete, more data to come"), keyed by (address, advertising SID).
///
/// A pure value type: feed every report in arrival order to `add(_:)`; it returns a report when one is
/// ready. Complete reports without pending fragments pass straight through. The joined report carries data
/// status 0 (complete) or 2 (truncated: the controller said so, or the joined data exceeded
/// `maxDataLength`). When more than `maxPending` chains are open the oldest is dropped.
public struct ExtendedReportAssembler: Sendable {
    private struct Key: Hashable {
        var address: BluetoothAddress
        var sid: UInt8
    }
    private struct Pending {
        var key: Key
        var report: AdvertisingReport
    }

    public let maxPending: Int
    public let maxDataLength: Int
    private var pending: [Pending] = []
    /// Chains dropped because too many were open.
    public private(set) var droppedChains = 0

    public init(maxPending: Int = 16, maxDataLength: Int = 1650) {
        self.maxPending = max(1, maxPending)
        self.maxDataLength = max(31, maxDataLength)
    }

    /// Number of fragment chains waiting for their last fragment.
    public var pendingCount: Int { pending.count }

    public mutating func add(_ report: AdvertisingReport) -> AdvertisingReport? {
        guard report.isExtended else { return report }
        let key = Key(address: report.address, sid: report.advertisingSID ?? 0xFF)
        let index = pending.firstIndex { $0.key == key }
        let status = report.dataStatus
        if index == nil, status != 1 { return report }

        var joined: AdvertisingReport
        if let index {
            joined = pending.remove(at: index).report
            joined.data.append(contentsOf: report.data)
            joined.rssi = report.rssi ?? joined.rssi
            joined.txPower = report.txPower ?? joined.txPower
            joined.timestamp = report.timestamp
        } else {
            joined = report
        }
        var finalStatus = status
        if joined.data.count > maxDataLength {
            joined.data.removeLast(joined.data.count - maxDataLength)
            finalStatus = 2
        }
        if finalStatus == 1 {
            if pending.count >= maxPending {
                pending.removeFirst()
                droppedChains += 1
            }
            pending.append(Pending(key: key, report: joined))
            return nil
        }
        joined.eventType = (joined.eventType & ~0x60) | UInt16(finalStatus) << 5
        return joined
    }

    /// Forgets every open chain (e.g. when scanning restarts).
    public mutating func reset() { pending.removeAll() }
}
