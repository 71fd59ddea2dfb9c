import BeaconConfigReading

extension FormatSettings {
    /// The `formats:` section. Names and layouts are checked by `validate()` (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init()
        enabled = r.list("enabled", of: String.self, default: enabled)
        layouts = r.list("layouts") { l in
            Layout(name: l.requiredString("name") ?? "", layout: l.requiredString("layout") ?? "")
        }
        includeDevices = r.bool("include_devices", default: includeDevices)
        bthomeKeys = r.list("bthome_keys") { k in
            let address = k.requiredString("address") ?? ""
            let file = k.string("key_file")
            let environment = k.string("key_env")
            if k.entry("key") != nil {
                k.issue(
                    "a bind key does not belong in the configuration file: put it in a file (`key_file`) or an "
                        + "environment variable (`key_env`)", key: "key")
            }
            var source: BTHomeKey.Source?
            switch (file, environment) {
            case let (file?, nil):
                if !file.hasPrefix("/") {
                    k.issue("`\(file)` must be an absolute path (the service runs from /)", key: "key_file")
                }
                source = .file(file)
            case let (nil, name?): source = .environment(name)
            case (_?, _?): k.issue("set key_file or key_env, not both", key: "key_env")
            case (nil, nil): k.issue("a BTHome device needs its bind key: `key_file` (recommended) or `key_env`")
            }
            return BTHomeKey(address: address, source: source)
        }
    }

    /// Every format name a region, beacon id or measured power may refer to: built-ins, layouts, and the
    /// address-only kinds.
    public var knownFormatNames: [String] {
        FormatRegistry.names + layouts.map(\.name) + ["device", "mac"]
    }
}
