import BeaconFormats
import BeaconModel

/// Renders a beacon the way an ESPresense node publishes it on `espresense/devices/<id>/<room>`, so
/// ESPresense-companion and Home Assistant's `mqtt_room` (string `id`, numeric `distance`) consume it unchanged.
public enum ESPresenseMapping {
    /// ESPresense's id for a beacon:
    /// - iBeacon: `iBeacon:<uuid>-<major>-<minor>` (uuid lower case)
    /// - AltBeacon: `altBeacon:<id1>-<id2>-<id3>`
    /// - Eddystone UID: `eddy:<namespace>-<instance>` (lower-case hex, no `0x`)
    /// - a device resolved through its identity resolving key: `irk:<name>` (ESPresense writes `irk:<key hex>`;
    ///   the key never goes into a topic here, so the configured name stands in for it)
    /// - anything else: `known:<mac>` (12 lower-case hex digits, no separators)
    public static func deviceID(for beacon: BeaconSnapshot) -> String {
        let ids = beacon.identifiers
        switch beacon.format {
        case "ibeacon" where ids.count == 3:
            return "iBeacon:" + ids[0].lowercased() + "-" + ids[1] + "-" + ids[2]
        case "altbeacon" where ids.count == 3:
            return "altBeacon:" + ids[0].lowercased() + "-" + ids[1] + "-" + ids[2]
        case "eddystone-uid" where ids.count == 2:
            return "eddy:" + bareHex(ids[0]) + "-" + bareHex(ids[1])
        case PrivateDevice.format:
            return beacon.beaconID
        default:
            return "known:" + compactMAC(beacon.address)
        }
    }

    /// The ESPresense payload: `id`, `name` (when known), `mac`, `rssi@1m` (when known), `rssi`, `raw`,
    /// `distance`, `int` (mean report interval in ms, when known), `mV` and `temp` (when the beacon reports
    /// battery and temperature fields).
    public static func payload(for beacon: BeaconSnapshot) -> JSONValue {
        var members: [(String, JSONValue)] = [("id", .string(deviceID(for: beacon)))]
        if let name = beacon.name { members.append(("name", .string(name))) }
        members.append(("mac", .string(compactMAC(beacon.address))))
        if let power = beacon.measuredPower { members.append(("rssi@1m", .int(Int64(power)))) }
        if let rssi = beacon.rssi { members.append(("rssi", .int(Int64(rssi)))) }
        if let distance = beacon.distance {
            members.append(("raw", .double(EventPayload.rounded(distance, places: 2))))
            members.append(("distance", .double(EventPayload.rounded(distance, places: 2))))
        }
        if beacon.reportRate > 0 { members.append(("int", .int(Int64((1000 / beacon.reportRate).rounded())))) }
        if let battery = beacon.fields["battery_mv"] { members.append(("mV", JSONValue(battery))) }
        if let temperature = beacon.fields["temperature_c"] { members.append(("temp", JSONValue(temperature))) }
        return .object(members)
    }

    /// `aabbccddeeff`.
    public static func compactMAC(_ address: BluetoothAddress) -> String {
        String(address.description.lowercased().filter { $0 != ":" })
    }

    static func bareHex(_ text: String) -> String {
        let lower = text.lowercased()
        return lower.hasPrefix("0x") ? String(lower.dropFirst(2)) : lower
    }
}
