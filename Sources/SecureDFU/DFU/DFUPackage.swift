/// A firmware update for a Secure DFU target: the init packet (`.dat`), the image (`.bin`) and what is known of
/// them. Built from a package's files, or read from nRF Util's `.zip` by `DFUPackageArchive`.
public struct DFUPackage: Sendable, Hashable {
    public var initPacket: [UInt8]
    public var firmware: [UInt8]
    /// The init packet's fields when it parses as a `dfu-cc` protobuf message.
    public var initCommand: DFUInitCommand?
    /// The package's firmware version: given (e.g. from manifest.json), else the init packet's `fw_version`.
    public var firmwareVersion: UInt32?
    /// The CRC-32 the package's publisher states for the image, when it states one.
    public var expectedFirmwareCRC32: UInt32?

    public init(
        initPacket: [UInt8], firmware: [UInt8], firmwareVersion: UInt32? = nil, expectedFirmwareCRC32: UInt32? = nil
    ) {
        self.initPacket = initPacket
        self.firmware = firmware
        self.initCommand = DFUInitCommand(initPacket)
        self.firmwareVersion = firmwareVersion ?? initCommand?.firmwareVersion
        self.expectedFirmwareCRC32 = expectedFirmwareCRC32
    }

    /// CRC-32 of the whole image, as the target reports it once every byte is in.
    public var firmwareCRC32: UInt32 { CRC32.checksum(firmware) }

    /// Everything wrong with the package, all at once; empty when it may be sent.
    /// - Parameters:
    ///   - installedVersion: the target's firmware version, when known; a package not newer is refused.
    ///   - allowDowngrade: send a package whose version is not newer anyway.
    public func problems(installedVersion: UInt32? = nil, allowDowngrade: Bool = false) -> [DFUPackageProblem] {
        var problems: [DFUPackageProblem] = []
        if initPacket.isEmpty { problems.append(.emptyInitPacket) }
        if firmware.isEmpty { problems.append(.emptyFirmware) }
        if firmware.count > Int(UInt32.max) { problems.append(.firmwareTooLarge(firmware.count)) }
        if let expected = expectedFirmwareCRC32, expected != firmwareCRC32 {
            problems.append(.firmwareCRCMismatch(expected: expected, actual: firmwareCRC32))
        }
        if let command = initCommand, command.imageSize > 0, command.imageSize != UInt64(firmware.count) {
            problems.append(.sizeMismatch(initPacket: command.imageSize, firmware: firmware.count))
        }
        if !allowDowngrade, let installed = installedVersion, let version = firmwareVersion, version <= installed {
            problems.append(.versionNotNewer(installed: installed, package: version))
        }
        return problems
    }
}

/// Why a package is refused before any transfer.
public enum DFUPackageProblem: Error, Sendable, Hashable, CustomStringConvertible {
    case emptyInitPacket
    case emptyFirmware
    case firmwareTooLarge(Int)
    /// The image's CRC-32 is not the one the package states.
    case firmwareCRCMismatch(expected: UInt32, actual: UInt32)
    /// The init packet announces another image size than the image has.
    case sizeMismatch(initPacket: UInt64, firmware: Int)
    case versionNotNewer(installed: UInt32, package: UInt32)
    /// The init packet does not fit the target's command object (known after Select).
    case initPacketTooLarge(size: Int, maximum: Int)
    /// The `.zip` file's structure is broken or unsupported (ZIP64, several disks).
    case notAnArchive(String)
    /// More entries or inflated bytes than `ZipArchive.Limits` allow (a zip bomb, or not a DFU package).
    case archiveTooLarge(String)
    /// An entry that cannot be read: its data, its compression, its size.
    case entryCorrupt(String, String)
    case entryCRCMismatch(String, expected: UInt32, actual: UInt32)
    /// A file the manifest names is not in the archive.
    case entryMissing(String)
    /// `manifest.json` is absent, not JSON, or names no image.
    case manifestInvalid(String)

    public var description: String {
        switch self {
        case .emptyInitPacket: return "the init packet is empty"
        case .emptyFirmware: return "the firmware image is empty"
        case .firmwareTooLarge(let size): return "the firmware image of \(size) bytes is too large"
        case .firmwareCRCMismatch(let expected, let actual):
            return "the image's CRC-32 is \(hex(actual)), the package states \(hex(expected))"
        case .sizeMismatch(let announced, let size):
            return "the init packet announces \(announced) bytes, the image has \(size)"
        case .versionNotNewer(let installed, let version):
            return "package version \(version) is not newer than the installed \(installed)"
        case .initPacketTooLarge(let size, let maximum):
            return "the init packet of \(size) bytes exceeds the target's \(maximum)"
        case .notAnArchive(let reason): return "not a zip file: \(reason)"
        case .archiveTooLarge(let reason): return "the zip file is too large: \(reason)"
        case .entryCorrupt(let name, let reason): return "entry \(name): \(reason)"
        case .entryCRCMismatch(let name, let expected, let actual):
            return "entry \(name): CRC-32 \(hex(actual)), the zip file states \(hex(expected))"
        case .entryMissing(let name): return "entry \(name) named by the manifest is not in the zip file"
        case .manifestInvalid(let reason): return "manifest.json: \(reason)"
        }
    }

    private func hex(_ value: UInt32) -> String { "0x" + String(value, radix: 16) }
}
