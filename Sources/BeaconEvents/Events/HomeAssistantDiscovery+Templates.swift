/// Templates and names the discovery configs use.
extension HomeAssistantDiscovery {
    /// A value template passing the known states through and mapping anything else (e.g. a region's
    /// `unknown`) to `None`, which Home Assistant's MQTT entities take as "state unknown" instead of logging
    /// "No matching payload found" and keeping the old state.
    static func stateTemplate(_ states: [String]) -> String {
        let list = states.map { "'\($0)'" }.joined(separator: ", ")
        return "{{ value_json.state if value_json.state in [\(list)] else 'None' }}"
    }

    /// The presence topic's state for the tracker and the presence sensor: `stale` (silent, but not longer than
    /// the beacon usually is) still shows as `seen`, so Home Assistant keeps it home.
    static let presenceTemplate =
        "{{ 'seen' if value_json.state in ['seen', 'stale'] else ('away' if value_json.state == 'away' else 'None') }}"

    /// The tracker's attributes: the stable identity fields of the presence payload (and the gateway that
    /// reports it), none of the values that change with every event (`seq`, `time`, distance, RSSI).
    static let identityAttributesTemplate =
        "{{ {'beacon_id': value_json.beacon_id, 'format': value_json.format, "
        + "'identifiers': value_json.identifiers, 'gateway': value_json.gateway} | tojson }}"

    /// A name for people from an id-like name: `_` and `-` become spaces, the first letter upper case
    /// (`front_door` -> `Front door`, `Office` stays `Office`).
    static func title(_ name: String) -> String {
        var words = ""
        for character in name {
            let separator = character == "_" || character == "-" || character == " "
            if separator {
                if !words.isEmpty && !words.hasSuffix(" ") { words.append(" ") }
            } else {
                words.append(character)
            }
        }
        while words.hasSuffix(" ") { words.removeLast() }
        guard let first = words.first else { return name }
        return first.uppercased() + words.dropFirst()
    }

    /// The beacon device's `model`: the format of its id (`ibeacon:...` -> `iBeacon`).
    package static func model(ofBeaconID id: String) -> String {
        let format = id.split(separator: ":", maxSplits: 1).first.map(String.init) ?? id
        switch format {
        case "ibeacon": return "iBeacon"
        case "altbeacon": return "AltBeacon"
        case "eddystone-uid": return "Eddystone-UID"
        case "eddystone-eid": return "Eddystone-EID"
        case "eddystone-url": return "Eddystone-URL"
        case "eddystone-tlm": return "Eddystone-TLM"
        case "exposure-notification": return "Exposure Notification"
        case "apple-overflow": return "Apple overflow area"
        case "mac": return "BLE device"
        default: return "BLE beacon (\(format))"
        }
    }
}
