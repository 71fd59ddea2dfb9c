import BeaconModel

/// The state of a configured device's Home Assistant `update` entity, published retained on
/// `<base>/device/<name>/update` (docs/home-assistant.md): the installed version (the device's Firmware
/// Revision String 0x2A26, as last read), the package's version, whether an update runs and how far it is.
public struct DeviceUpdateState: Sendable, Equatable {
    public var installedVersion: String?
    public var latestVersion: String?
    public var inProgress = false
    /// 0...100 while an update runs; nil otherwise.
    public var percent: Int?

    public init(
        installedVersion: String? = nil, latestVersion: String? = nil, inProgress: Bool = false, percent: Int? = nil
    ) {
        self.installedVersion = installedVersion
        self.latestVersion = latestVersion
        self.inProgress = inProgress
        self.percent = percent
    }

    /// `{"installed_version", "latest_version", "in_progress", "update_percentage"}`: Home Assistant's MQTT update
    /// entity reads these members from a JSON state (a version not known is left out).
    public var payload: String {
        var members: [(String, JSONValue)] = []
        if let installedVersion { members.append(("installed_version", .string(installedVersion))) }
        if let latestVersion { members.append(("latest_version", .string(latestVersion))) }
        members.append(("in_progress", .bool(inProgress)))
        members.append(("update_percentage", percent.map { .int(Int64($0)) } ?? .null))
        return JSONValue.object(members).serialized
    }
}
