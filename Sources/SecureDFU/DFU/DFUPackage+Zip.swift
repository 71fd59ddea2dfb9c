extension DFUPackage {
    /// The one image of an nRF Util package (`.zip`), as every command opens one (`gatt dfu`, the startup checks and
    /// the daemon before each update, through BeaconBridgeCLI's `DFUPackageFile`; the fuzz target too): the archive
    /// read under `limits` (`DFUPackageArchive`), exactly one image, and that image's `problems()`, each refusal
    /// with every problem at once as `DFUError.invalidPackage(.validatePackage, ...)`.
    public init(zip bytes: [UInt8], limits: ZipArchive.Limits = ZipArchive.Limits()) throws(DFUError) {
        let archive = try DFUPackageArchive(zip: bytes, limits: limits)
        guard archive.images.count == 1, let image = archive.images.first else {
            let kinds = archive.images.map(\.kind).joined(separator: ", ")
            throw .invalidPackage(
                .validatePackage,
                [.manifestInvalid("\(archive.images.count) images (\(kinds)): one image per run is supported")])
        }
        let problems = image.package.problems()
        guard problems.isEmpty else { throw .invalidPackage(.validatePackage, problems) }
        self = image.package
    }
}
