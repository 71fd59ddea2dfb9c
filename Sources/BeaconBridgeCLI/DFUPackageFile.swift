import SecureDFU

/// A Secure DFU package file (nRF Util `.zip` with one image) read and validated (`DFUPackage(zip:)`): by `gatt dfu`,
/// by the startup checks for `gatt.devices[].firmware`, and by the daemon before each update (the file may have been
/// replaced).
enum DFUPackageFile {
    enum Failure: Error, CustomStringConvertible {
        /// The file cannot be read (missing, no permission, larger than `maximumBytes`): `path: reason`.
        case unreadable(path: String, reason: String)
        /// The archive or its image is refused (every problem at once).
        case invalid(path: String, DFUError)

        var description: String {
            switch self {
            case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
            case .invalid(let path, let error): return "\(path): \(error)"
            }
        }
    }

    /// The largest package file read (an nRF52840 holds 1 MiB of flash; `ZipArchive.Limits` bound what it
    /// inflates to).
    static let maximumBytes = 8 << 20

    static func load(_ path: String) throws(Failure) -> DFUPackage {
        guard let bytes = LocalFiles.readBytes(path, maxBytes: maximumBytes) else {
            throw .unreadable(path: path, reason: LocalFiles.lastError())
        }
        do throws(DFUError) {
            return try DFUPackage(zip: bytes)
        } catch {
            throw .invalid(path: path, error)
        }
    }
}
