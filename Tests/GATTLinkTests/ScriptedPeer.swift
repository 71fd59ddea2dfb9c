import BeaconModel
import BeaconRuntime
import GATTLink
import GATTTestPeer
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A peer on the far end of a `socketpair(AF_UNIX, SOCK_SEQPACKET)` standing in for the L2CAP ATT socket, on a
/// thread of its own: each PDU the connection sends goes to `respond`, whose answer is sent back (or nothing,
/// or the socket closed). Ends when the connection's side closes, after `respond` said `.close`, or after 10 s.
final class ScriptedPeer: Sendable {
    enum Step: Sendable {
        case reply([[UInt8]])
        case ignore
        case close
    }

    /// The connection's end of the pair (closed by its `L2CAPSocket`).
    let clientFD: Int32
    /// The number of PDUs the peer received, once it ended.
    let finished = Latch<Int>()

    init(_ respond: @escaping @Sendable ([UInt8]) -> Step) throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        clientFD = pair[0]
        let peerFD = pair[1]
        let finished = finished
        let started = DedicatedThread.start(name: "bb-test-peer") {
            let peer = L2CAPSocket(adopting: peerFD, peer: "test peer")
            let deadline = SystemClock.monotonic() + ScriptedPeer.lifetime
            var received = 0
            serving: while SystemClock.monotonic() < deadline {
                switch peer.receive(timeoutMilliseconds: 100) {
                case .timeout: continue
                case .closed: break serving
                case .pdu(let bytes):
                    received += 1
                    switch respond(bytes) {
                    case .reply(let pdus): for pdu in pdus { _ = peer.send(pdu) }
                    case .ignore: break
                    case .close: break serving
                    }
                }
            }
            peer.close()
            finished.open(received)
        }
        try #require(started == 0)
    }

    /// A peer serving the test peripheral's database (`TestGATTServer`), as the QEMU stage's peripheral does.
    static func serving(firmware: String = "1.2.3-test", battery: UInt8 = 87) throws -> ScriptedPeer {
        let server = Mutex(TestGATTServer(firmware: firmware, battery: battery))
        return try ScriptedPeer { bytes in .reply(server.withLock { $0.handle(bytes) }.map { $0.encode() }) }
    }

    /// How long the peer serves before it gives up (a test that hangs ends; none should come near it).
    static let lifetime: Double = 120

    /// A connection over the client's end. The ATT timeout is long by default: the suites run beside builds
    /// (and, on a fresh machine, the creation of the cross build's roots), where a peer thread may answer late;
    /// only the tests about timeouts pass a short one and expect it to expire.
    func connection(slot: consuming ConnectionSlot? = nil, requestTimeout: Double = 30) -> GATTConnection {
        GATTConnection(
            socket: L2CAPSocket(adopting: clientFD, peer: "AA:BB:CC:DD:EE:FF"), slot: slot,
            requestTimeout: requestTimeout)
    }
}
