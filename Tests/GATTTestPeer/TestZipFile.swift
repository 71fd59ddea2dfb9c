import SecureDFU

/// The bytes of a `.zip` (local headers, central directory, end record; no ZIP64, no data descriptors) from
/// entries already compressed, for the DFU tests (`TestZipWriter` adds deflate and hostile overrides) and for the
/// QEMU scenario's package (`beaconbridge-testpeer --write-package`).
public enum TestZipFile {
    public struct Entry: Sendable {
        public var name: String
        /// 0 stored, 8 deflated.
        public var method: UInt16
        public var compressed: [UInt8]
        public var crc: UInt32
        public var size: UInt32

        public init(name: String, method: UInt16, compressed: [UInt8], crc: UInt32, size: UInt32) {
            self.name = name
            self.method = method
            self.compressed = compressed
            self.crc = crc
            self.size = size
        }

        /// A stored entry of `data`.
        public static func stored(_ name: String, _ data: [UInt8]) -> Entry {
            Entry(name: name, method: 0, compressed: data, crc: CRC32.checksum(data), size: UInt32(data.count))
        }
    }

    /// The manifest nRF Util writes for one application image in `app.dat` and `app.bin`.
    public static let applicationManifest =
        #"{"manifest": {"application": {"bin_file": "app.bin", "dat_file": "app.dat"}}}"#

    /// An nRF Util package with stored entries: manifest.json, app.dat (the init packet), app.bin (the image).
    public static func storedDFUPackage(initPacket: [UInt8], firmware: [UInt8]) -> [UInt8] {
        bytes([
            .stored("manifest.json", Array(applicationManifest.utf8)), .stored("app.dat", initPacket),
            .stored("app.bin", firmware),
        ])
    }

    public static func bytes(_ entries: [Entry]) -> [UInt8] {
        var out: [UInt8] = []
        var directory: [UInt8] = []
        for entry in entries {
            let name = Array(entry.name.utf8)
            let offset = UInt32(out.count)
            out += le32(0x0403_4B50) + le16(20) + le16(0) + le16(entry.method) + le16(0) + le16(0x21)
            out += le32(entry.crc) + le32(UInt32(entry.compressed.count)) + le32(entry.size)
            out += le16(UInt16(name.count)) + le16(0) + name + entry.compressed
            directory += le32(0x0201_4B50) + le16(0x031E) + le16(20) + le16(0) + le16(entry.method) + le16(0)
            directory += le16(0x21) + le32(entry.crc) + le32(UInt32(entry.compressed.count)) + le32(entry.size)
            directory += le16(UInt16(name.count)) + le16(0) + le16(0) + le16(0) + le16(0) + le32(0) + le32(offset)
            directory += name
        }
        let directoryOffset = UInt32(out.count)
        out += directory
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(UInt16(entries.count)) + le16(UInt16(entries.count))
        out += le32(UInt32(directory.count)) + le32(directoryOffset) + le16(0)
        return out
    }

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func le32(_ value: UInt32) -> [UInt8] { le16(UInt16(value & 0xFFFF)) + le16(UInt16(value >> 16)) }
}
