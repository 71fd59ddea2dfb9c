import GATTTestPeer

@testable import SecureDFU

/// Init packets (`TestInitPacket`), images and packages for the tests.
enum DFUTestPackages {
    /// A `Packet` holding a (signed, when `signed`) `Command` with an application `InitCommand`.
    static func initPacket(version: UInt32, applicationSize: Int, signed: Bool = true) -> [UInt8] {
        TestInitPacket.bytes(version: version, applicationSize: applicationSize, signed: signed)
    }

    /// A few-KB image of reproducible bytes.
    static func image(_ size: Int, seed: UInt64 = 7) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func package(size: Int = 5_000, version: UInt32 = 3) -> DFUPackage {
        DFUPackage(initPacket: initPacket(version: version, applicationSize: size), firmware: image(size))
    }
}
