import GATTTestPeer

@testable import BeaconModel
@testable import SecureDFU

/// What a scripted run of a transfer against a `TestDFUTarget` produced.
struct DFURun {
    var progress: [DFUProgress] = []
    var outcome: SecureDFUAction?
    var controlPointWrites: [[UInt8]] = []
    /// Every packet written, init packet and image alike.
    var packets: [[UInt8]] = []
    var receipts = 0

    /// Runs `transfer` against `target` until it ends, or until `disconnectAfterPackets` packets were written.
    static func run(
        _ transfer: inout SecureDFUTransfer, _ target: inout TestDFUTarget, disconnectAfterPackets: Int? = nil,
        start: Timestamp = 100
    ) -> DFURun {
        var run = DFURun()
        var now = start
        var pending = transfer.handle(.start(at: now))
        var inbox: [[UInt8]] = []
        while !pending.isEmpty || !inbox.isEmpty {
            if pending.isEmpty {
                now += 0.05
                pending = transfer.handle(.controlPoint(inbox.removeFirst(), at: now))
                continue
            }
            let action = pending.removeFirst()
            switch action {
            case .writeControlPoint(let bytes):
                run.controlPointWrites.append(bytes)
                inbox += target.controlPoint(bytes)
            case .writePacket(let bytes):
                run.packets.append(bytes)
                now += 0.01
                let receipts = target.packet(bytes)
                run.receipts += receipts.count
                inbox += receipts
                if let cut = disconnectAfterPackets, run.packets.count == cut {
                    pending = transfer.handle(.disconnected)
                    inbox = []
                }
            case .progress(let progress):
                run.progress.append(progress)
            case .completed, .failed:
                run.outcome = action
            }
        }
        return run
    }
}
