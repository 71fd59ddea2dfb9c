import BeaconModel

/// Momentary event fields of sensor formats (BTHome `button`, `dimmer`, `command`, numbered `_1`, `_2`, ..., with
/// their `dimmer_steps` / `command_args`): unlike readings they describe one moment, so the tracker publishes a
/// sighting for the report that carries a new one (a device trigger must not wait for the next sighting
/// interval), and does not carry it into later sightings (which would fire the trigger again). A device that
/// repeats an advertisement for reliability repeats its `packet_id`: a repeat is the same event, not a new one.
public enum SensorEventFields {
    /// Event field names per format name, for the formats that have any.
    static let byFormat: [String: [String]] = {
        var out: [String: [String]] = [:]
        for format in FormatRegistry.builtins {
            let names = format.fields.filter { $0.kind == .event }.map(\.name)
            if !names.isEmpty { out[format.name] = names }
        }
        return out
    }()

    /// The event field names of `format`, nil when it has none (the common case: one dictionary miss).
    @inline(__always)
    public static func names(of format: String) -> [String]? { byFormat[format] }

    /// Whether `name` belongs to an event: the event field itself or one of its companions (`button_2`,
    /// `dimmer_steps`, `command_args`).
    public static func isEventField(_ name: String, _ events: [String]) -> Bool {
        events.contains {
            name == $0 || (name.hasPrefix($0) && name.utf8.dropFirst($0.utf8.count).first == UInt8(ascii: "_"))
        }
    }

    /// Whether `observation` carries a new event; a repeat (the same `packet_id` as the previous report of the
    /// beacon, `previous`) has its event fields removed and is not new.
    public static func admit(_ observation: inout Observation, events: [String], previous: [String: FieldValue]) -> Bool
    {
        guard observation.fields.keys.contains(where: { isEventField($0, events) }) else { return false }
        if let packet = observation.fields["packet_id"], packet == previous["packet_id"] {
            observation.fields = observation.fields.filter { !isEventField($0.key, events) }
            return false
        }
        return true
    }
}
