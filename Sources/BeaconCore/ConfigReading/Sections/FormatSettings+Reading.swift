extension FormatSettings {
    /// The `formats:` section. Names and layouts are checked by `validate()` (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init()
        enabled = r.list("enabled", of: String.self, default: enabled)
        layouts = r.list("layouts") { l in
            Layout(name: l.requiredString("name") ?? "", layout: l.requiredString("layout") ?? "")
        }
        includeDevices = r.bool("include_devices", default: includeDevices)
    }

    /// Every format name a region, beacon id or measured power may refer to: built-ins, layouts, and the
    /// address-only kinds.
    public var knownFormatNames: [String] {
        FormatRegistry.names + layouts.map(\.name) + ["device", "mac"]
    }
}
