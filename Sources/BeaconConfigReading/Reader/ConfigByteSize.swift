/// A size in bytes written in a configuration file: `1048576`, `512KiB`, `256MiB`, `1GiB`, or decimal units
/// `500kB`, `10MB`, `1GB`.
public struct ConfigByteSize: Sendable, Hashable, Comparable, ConfigScalarValue, CustomStringConvertible {
    public var bytes: Int

    public init(bytes: Int) { self.bytes = bytes }

    public static func < (a: ConfigByteSize, b: ConfigByteSize) -> Bool { a.bytes < b.bytes }

    public static var configTypeDescription: String { "a size such as 1048576, 512KiB or 256MiB" }

    package static let units: [(suffix: String, factor: Int)] = [
        ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("kB", 1_000), ("KB", 1_000), ("MB", 1_000_000),
        ("GB", 1_000_000_000), ("B", 1),
    ]

    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> ConfigByteSize {
        let text = scalar.text.filter { $0 != " " && $0 != "_" }
        var number = Substring(text)
        var factor = 1
        for unit in units where text.hasSuffix(unit.suffix) {
            number = number.dropLast(unit.suffix.count)
            factor = unit.factor
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0 >= "0" && $0 <= "9" }), let value = Int(number) else {
            throw ConfigValueError("`\(scalar.text)` is not a size (use e.g. 1048576, 512KiB or 256MiB)")
        }
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        guard !overflow else { throw ConfigValueError("`\(scalar.text)` is too large") }
        return ConfigByteSize(bytes: product)
    }

    public static func configText(_ value: ConfigByteSize) -> String { value.description }

    /// `256MiB` when exact in binary units, else the byte count.
    public var description: String {
        for unit in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] where bytes != 0 && bytes % unit.1 == 0 {
            return "\(bytes / unit.1)\(unit.0)"
        }
        return "\(bytes)"
    }
}
