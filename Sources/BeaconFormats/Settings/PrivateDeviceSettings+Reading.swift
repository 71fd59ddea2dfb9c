import BeaconConfigReading
import BeaconModel

extension PrivateDeviceSettings {
    /// The `devices:` section.
    public init(from r: inout ConfigReader) {
        let defaults = PrivateDeviceSettings()
        self.init(
            publishUnresolved: r.bool("publish_unresolved", default: defaults.publishUnresolved),
            addressLifetime: r.duration("address_lifetime_s", default: defaults.addressLifetime),
            unresolvedCache: r.value("unresolved_cache", default: defaults.unresolvedCache),
            known: r.list("known") { PrivateDevice(from: &$0) })
    }
}

extension PrivateDevice {
    /// One element of `devices.known`: `name`, one of `irk` / `irk_file` / `irk_env`, `measured_power`,
    /// `away_timeout_s`. A malformed inline key is reported at its line and column without repeating it.
    public init(from r: inout ConfigReader) {
        let name = r.requiredString("name") ?? ""
        if !name.isEmpty, !GatewaySettings.isValidIdentifier(name) {
            r.issue(
                "`\(name)` is not a valid device name (1-64 letters, digits, `_` or `-`; it becomes part of the "
                    + "id `irk:<name>` and of MQTT topics)", key: "name")
        }
        let inline = r.string("irk")
        let file = r.string("irk_file")
        let environment = r.string("irk_env")
        let given = [inline.map { _ in "irk" }, file.map { _ in "irk_file" }, environment.map { _ in "irk_env" }]
            .compactMap { $0 }
        var source = KeySource.inline
        var key: IdentityResolvingKey?
        if given.count > 1 {
            r.issue("give the key once: \(given.map { "`\($0)`" }.joined(separator: ", ")) are all set", key: given[1])
        }
        if let inline {
            if let problem = IdentityResolvingKey.problem(with: inline) { r.issue(problem, key: "irk") }
            key = IdentityResolvingKey(text: inline)
        } else if let file {
            source = .file(file)
            if !file.hasPrefix("/") {
                r.issue("`\(file)` must be an absolute path (the service runs from /)", key: "irk_file")
            }
        } else if let environment {
            source = .environment(environment)
            if environment.isEmpty { r.issue("must not be empty", key: "irk_env") }
        } else if given.isEmpty {
            r.issue("a device needs its identity resolving key: `irk_file` (recommended), `irk_env` or `irk`")
        }
        self.init(
            name: name, keySource: source, key: key,
            measuredPower: r.int("measured_power", in: -127...20),
            awayTimeout: r.duration("away_timeout_s"))
    }
}
