import BeaconModel

/// Turns observations of built-in formats (from the scenario simulator or a test) into a btsnoop capture of
/// the HCI LE Advertising Report events a controller would have delivered, so the daemon can replay them
/// through the whole pipeline. Observations of formats without a synthetic payload are skipped and counted.
public struct SyntheticCapture: Sendable {
    public private(set) var bytes: [UInt8]
    public private(set) var events = 0
    public private(set) var skipped = 0
    private let writer = BTSnoopWriter(datalink: .hciUART)

    public init() { bytes = writer.header() }

    public init(_ observations: [Observation]) {
        self.init()
        for observation in observations { append(observation) }
    }

    public mutating func append(_ observation: Observation) {
        guard let report = SyntheticAdvertisement.report(for: observation),
            let event = AdvertisingReportEncoder.legacyEvent(report)
        else {
            skipped += 1
            return
        }
        bytes.append(contentsOf: writer.eventRecord(event, timestamp: observation.timestamp))
        events += 1
    }
}
