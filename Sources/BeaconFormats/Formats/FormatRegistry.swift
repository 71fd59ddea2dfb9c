/// The one list of built-in formats, in the order they are tried (after the user's layouts). Adding a format:
/// write `Formats/<Format>.swift` with a `static let` on `BeaconFormat`, add it here, add its tests.
public enum FormatRegistry {
    public static let builtins: [BeaconFormat] = [
        .iBeacon,
        .altBeacon,
        .eddystoneUID,
        .eddystoneURL,
        .eddystoneTLM,
        .eddystoneEID,
        .exposureNotification,
        .appleOverflow,
        .ruuvi,
        .govee,
        .bthome,
    ]

    /// Names of the built-in formats, in registry order.
    public static let names: [String] = builtins.map(\.name)

    /// The built-in format called `name`.
    public static func format(named name: String) -> BeaconFormat? { builtins.first { $0.name == name } }
}
