import BeaconModel

/// An nRF Util DFU package (`.zip`): `manifest.json` names, per image, its init packet (`dat_file`) and image
/// (`bin_file`):
///
///     {"manifest": {"application": {"bin_file": "app.bin", "dat_file": "app.dat"}}}
///
/// Image kinds are `softdevice_bootloader`, `softdevice`, `bootloader` and `application`; `images` lists them in
/// the order nRF Util sends them (SoftDevice and bootloader first, the application last). Every entry of the
/// archive is read and its CRC-32 checked, and every problem is reported at once as
/// `DFUError.invalidPackage(.validatePackage, problems)`; then each image's own `DFUPackage.problems()` apply.
public struct DFUPackageArchive: Sendable {
    public struct Image: Sendable, Hashable {
        /// The manifest's key: `application`, `softdevice`, `bootloader` or `softdevice_bootloader`.
        public var kind: String
        public var initPacketFile: String
        public var firmwareFile: String
        public var package: DFUPackage
    }

    /// The kinds a manifest may name, in the order they are sent.
    public static let kinds = ["softdevice_bootloader", "softdevice", "bootloader", "application"]
    /// The largest `manifest.json` read.
    static let maximumManifestBytes = 64 << 10

    public let images: [Image]

    public init(zip bytes: [UInt8], limits: ZipArchive.Limits = ZipArchive.Limits()) throws(DFUError) {
        func refuse(_ problems: [DFUPackageProblem]) -> DFUError { .invalidPackage(.validatePackage, problems) }
        let archive: ZipArchive
        do throws(DFUPackageProblem) {
            archive = try ZipArchive(bytes, limits: limits)
        } catch {
            throw refuse([error])
        }
        var problems: [DFUPackageProblem] = []
        var files: [String: [UInt8]] = [:]
        for entry in archive.entries where !entry.name.hasSuffix("/") {
            do throws(DFUPackageProblem) {
                files[entry.name] = try archive.contents(of: entry)
            } catch {
                problems.append(error)
            }
        }
        guard archive.entries.contains(where: { $0.name == "manifest.json" }) else {
            throw refuse(problems + [.manifestInvalid("not in the zip file (is this an nRF Util DFU package?)")])
        }
        guard let manifestBytes = files["manifest.json"] else { throw refuse(problems) }
        guard manifestBytes.count <= Self.maximumManifestBytes else {
            throw refuse(problems + [.manifestInvalid("\(manifestBytes.count) bytes, at most 64 KiB")])
        }
        let manifest: JSONValue
        do throws(JSONParseError) {
            manifest = try JSONValue(parsing: String(decoding: manifestBytes, as: UTF8.self), maxDepth: 8)
        } catch {
            throw refuse(problems + [.manifestInvalid("\(error)")])
        }
        guard case .object(let members)? = manifest["manifest"] else {
            throw refuse(problems + [.manifestInvalid("no \"manifest\" object")])
        }
        var images: [Image] = []
        for (key, _) in members where !Self.kinds.contains(key) && key != "dfu_version" {
            problems.append(.manifestInvalid("unknown image kind \"\(key)\""))
        }
        for kind in Self.kinds {
            guard let image = manifest["manifest"]?[kind] else { continue }
            guard case .string(let datFile)? = image["dat_file"], case .string(let binFile)? = image["bin_file"] else {
                problems.append(.manifestInvalid("\(kind) needs \"dat_file\" and \"bin_file\" strings"))
                continue
            }
            var missing = false
            for name in [datFile, binFile] where files[name] == nil {
                missing = true
                // An entry that is present but unreadable is already reported.
                if !archive.entries.contains(where: { $0.name == name }) { problems.append(.entryMissing(name)) }
            }
            guard !missing, let initPacket = files[datFile], let firmware = files[binFile] else { continue }
            images.append(
                Image(
                    kind: kind, initPacketFile: datFile, firmwareFile: binFile,
                    package: DFUPackage(initPacket: initPacket, firmware: firmware)))
        }
        if images.isEmpty && problems.isEmpty { problems.append(.manifestInvalid("names no image")) }
        guard problems.isEmpty else { throw refuse(problems) }
        self.images = images
    }
}
