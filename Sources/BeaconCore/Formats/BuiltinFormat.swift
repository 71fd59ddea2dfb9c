/// The formats BeaconBridge recognises without configuration. Those the layout grammar can express are
/// defined by their layout (`layout`), so the same engine serves built-in and user formats.
public enum BuiltinFormat: String, Sendable, CaseIterable, Hashable {
    case iBeacon = "ibeacon"
    case altBeacon = "altbeacon"
    case eddystoneUID = "eddystone-uid"
    case eddystoneURL = "eddystone-url"
    case eddystoneTLM = "eddystone-tlm"
    case eddystoneEID = "eddystone-eid"
    case exposureNotification = "exposure-notification"
    case appleOverflow = "apple-overflow"

    /// The format's layout in the grammar, nil for formats decoded by dedicated code (URL expansion,
    /// telemetry, the overflow bit mask).
    public var layoutString: String? {
        switch self {
        case .iBeacon: "m:0-3=4c000215,i:4-19,i:20-21,i:22-23,p:24-24"
        case .altBeacon: "m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25"
        case .eddystoneUID: "s:0-1=feaa,m:2-2=00,p:3-3:-41,i:4-13,i:14-19"
        case .eddystoneEID: "s:0-1=feaa,m:2-2=30,p:3-3:-41,i:4-11"
        case .exposureNotification: "s:0-1=fd6f,p:-:-59,i:2-17,d:18-21"
        case .eddystoneURL, .eddystoneTLM, .appleOverflow: nil
        }
    }

    /// The compiled layout with the built-in rendering options (field names, hex identifiers).
    var layout: BeaconLayout? {
        guard let layoutString else { return nil }
        switch self {
        case .altBeacon:
            return BeaconLayout(builtin: rawValue, layout: layoutString, dataFieldNames: ["mfg_reserved"])
        case .exposureNotification:
            return BeaconLayout(builtin: rawValue, layout: layoutString, hexIdentifiers: true,
                                dataFieldNames: ["metadata"], hexDataFields: true)
        case .eddystoneUID, .eddystoneEID:
            return BeaconLayout(builtin: rawValue, layout: layoutString, rawPowerFieldName: "tx_power_0m")
        default:
            return BeaconLayout(builtin: rawValue, layout: layoutString)
        }
    }
}
