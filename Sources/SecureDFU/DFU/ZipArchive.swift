/// The entries of a `.zip` file (PKWARE APPNOTE: end of central directory, central directory, local headers),
/// as nRF Util writes DFU packages: stored or deflated entries, no encryption, no ZIP64, one disk. Untrusted
/// input: the entry count, name lengths, each entry's size and the total inflated size are bounded, and every
/// entry's CRC-32 is checked when it is read. Problems are `DFUPackageProblem`s naming the entry.
/// Deflated data and CRC-32 are zlib's (`Inflate`, `CRC32`); the container is read here because zlib does not read
/// zip files (minizip does, and libminizip1 is not on every Raspberry Pi OS image), and nRF Util's layout needs
/// little: three fixed records, read with bounds checks.
public struct ZipArchive: Sendable {
    public struct Limits: Sendable, Hashable {
        public var maximumEntries = 64
        public var maximumNameBytes = 255
        /// The largest inflated entry (nRF52840 flash is 1 MiB).
        public var maximumEntryBytes = 2 << 20
        /// All inflated entries together.
        public var maximumTotalBytes = 4 << 20
        public init() {}
    }

    public struct Entry: Sendable, Hashable {
        public var name: String
        /// 0 stored, 8 deflated.
        public var method: UInt16
        public var crc32: UInt32
        public var compressedSize: Int
        public var size: Int
        var localHeaderOffset: Int
    }

    public let bytes: [UInt8]
    public let entries: [Entry]
    public let limits: Limits

    /// Reads the central directory; throws the first structural problem (the rest cannot be trusted after it).
    public init(_ bytes: [UInt8], limits: Limits = Limits()) throws(DFUPackageProblem) {
        self.bytes = bytes
        self.limits = limits
        func notZip(_ reason: String) -> DFUPackageProblem { .notAnArchive(reason) }
        // The end of central directory record: 22 bytes and a comment of at most 65,535 bytes, at the end.
        guard bytes.count >= 22 else { throw notZip("\(bytes.count) bytes is too short for a zip") }
        var end: Int?
        var candidate = bytes.count - 22
        let lowest = max(0, bytes.count - 22 - 0xFFFF)
        while candidate >= lowest {
            if Self.uint32(bytes, candidate) == 0x0605_4B50,
                candidate + 22 + Int(Self.uint16(bytes, candidate + 20)) == bytes.count
            {
                end = candidate
                break
            }
            candidate -= 1
        }
        guard let end else { throw notZip("no end of central directory record") }
        let disk = Self.uint16(bytes, end + 4)
        let directoryDisk = Self.uint16(bytes, end + 6)
        let count = Int(Self.uint16(bytes, end + 10))
        let directorySize = Int(Self.uint32(bytes, end + 12))
        let directoryOffset = Int(Self.uint32(bytes, end + 16))
        guard disk == 0, directoryDisk == 0, Self.uint16(bytes, end + 8) == count else {
            throw notZip("multi-disk archives are not supported")
        }
        guard count != 0xFFFF, directoryOffset != 0xFFFF_FFFF else { throw notZip("ZIP64 archives are not supported") }
        guard count <= limits.maximumEntries else {
            throw .archiveTooLarge("\(count) entries, at most \(limits.maximumEntries)")
        }
        guard directoryOffset <= end, directorySize <= end - directoryOffset else {
            throw notZip("the central directory lies outside the file")
        }
        var entries: [Entry] = []
        var offset = directoryOffset
        var total = 0
        for index in 0..<count {
            guard end - offset >= 46, Self.uint32(bytes, offset) == 0x0201_4B50 else {
                throw notZip("central directory entry \(index + 1) is cut off or has no signature")
            }
            let nameLength = Int(Self.uint16(bytes, offset + 28))
            let extraLength = Int(Self.uint16(bytes, offset + 30))
            let commentLength = Int(Self.uint16(bytes, offset + 32))
            let next = offset + 46 + nameLength + extraLength + commentLength
            guard next <= end else { throw notZip("central directory entry \(index + 1) runs past the directory") }
            guard nameLength > 0, nameLength <= limits.maximumNameBytes else {
                throw notZip("entry \(index + 1) has a name of \(nameLength) bytes")
            }
            let nameBytes = Array(bytes[(offset + 46)..<(offset + 46 + nameLength)])
            guard nameBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw notZip("entry \(index + 1) has a name that is not printable ASCII")
            }
            let name = String(decoding: nameBytes, as: UTF8.self)
            let entry = Entry(
                name: name, method: Self.uint16(bytes, offset + 10), crc32: Self.uint32(bytes, offset + 16),
                compressedSize: Int(Self.uint32(bytes, offset + 20)), size: Int(Self.uint32(bytes, offset + 24)),
                localHeaderOffset: Int(Self.uint32(bytes, offset + 42)))
            if Self.uint16(bytes, offset + 8) & 1 != 0 {
                throw .entryCorrupt(name, "encrypted entries are not supported")
            }
            guard entry.size <= limits.maximumEntryBytes else {
                throw .archiveTooLarge(
                    "entry \(name) inflates to \(entry.size) bytes, at most \(limits.maximumEntryBytes)")
            }
            total += entry.size
            guard total <= limits.maximumTotalBytes else {
                throw .archiveTooLarge("the entries inflate to more than \(limits.maximumTotalBytes) bytes")
            }
            guard !entries.contains(where: { $0.name == name }) else { throw notZip("entry \(name) appears twice") }
            entries.append(entry)
            offset = next
        }
        self.entries = entries
    }

    /// The entry's bytes, inflated and checked against its size and CRC-32.
    public func contents(of name: String) throws(DFUPackageProblem) -> [UInt8] {
        guard let entry = entries.first(where: { $0.name == name }) else { throw .entryMissing(name) }
        return try contents(of: entry)
    }

    public func contents(of entry: Entry) throws(DFUPackageProblem) -> [UInt8] {
        let name = entry.name
        let header = entry.localHeaderOffset
        guard header <= bytes.count - 30, Self.uint32(bytes, header) == 0x0403_4B50 else {
            throw .entryCorrupt(name, "no local header at offset \(header)")
        }
        let dataStart = header + 30 + Int(Self.uint16(bytes, header + 26)) + Int(Self.uint16(bytes, header + 28))
        guard dataStart <= bytes.count, entry.compressedSize <= bytes.count - dataStart else {
            throw .entryCorrupt(name, "its data runs past the end of the file")
        }
        let stored = Array(bytes[dataStart..<(dataStart + entry.compressedSize)])
        let data: [UInt8]
        switch entry.method {
        case 0:
            data = stored
        case 8:
            do throws(Inflate.Failure) {
                data = try Inflate.decompress(stored, limit: entry.size)
            } catch {
                throw .entryCorrupt(name, "deflate: \(error)")
            }
        default:
            throw .entryCorrupt(name, "compression method \(entry.method) is not supported (stored or deflate)")
        }
        guard data.count == entry.size else {
            throw .entryCorrupt(name, "\(data.count) bytes, the directory says \(entry.size)")
        }
        let crc = CRC32.checksum(data)
        guard crc == entry.crc32 else { throw .entryCRCMismatch(name, expected: entry.crc32, actual: crc) }
        return data
    }

    static func uint16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        guard offset >= 0, offset + 2 <= bytes.count else { return 0 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        guard offset >= 0, offset + 4 <= bytes.count else { return 0 }
        return UInt32(uint16(bytes, offset)) | UInt32(uint16(bytes, offset + 2)) << 16
    }
}
