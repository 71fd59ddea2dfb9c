import BeaconModel
import BeaconTracking

extension HomeAssistantDiscovery {
    /// Per region with a typical device (`taught_like`), the buttons "Teach <region> boundary" and "Teach <region>
    /// inside" on this gateway's device (issue 43; docs/teach.md). A press publishes the site's teach command for
    /// that device (`<prefix>/regions/command/teach`), so every gateway of the site records its own link, as
    /// `beaconbridge regions teach` does; each gateway's reply is on `<prefix>/<gateway>/reply/regions/teach`,
    /// which this gateway's "Teach" sensor shows (the reply's `state`, or `refused`; the reply's fields, such as
    /// `seconds_left`, `reports`, `needs` and `error`, as attributes).
    func teachButtons(regions: [Region]) -> [ControlMessage] {
        guard regions.contains(where: { $0.taughtLike != nil }) else { return [] }
        let command = TeachCommand.commandBase(prefix: layout.settings.prefix) + "/teach"
        let replies = TeachCommand.replyTopic(gatewayBase: layout.base, verb: "teach")
        var out = [
            message(
                "sensor", object: "teach",
                [
                    ("name", .string("Teach")),
                    ("unique_id", .string(gatewayDeviceID + "_teach")),
                    ("state_topic", .string(replies)),
                    ("value_template", .string("{{ value_json.state if value_json.ok else 'refused' }}")),
                    ("json_attributes_topic", .string(replies)),
                    ("icon", .string("mdi:school")),
                    ("entity_category", .string("diagnostic")),
                ], device: gatewayDevice())
        ]
        for region in regions {
            guard let device = region.taughtLike else { continue }
            for spot in [TeachSpot.boundary, .inside] {
                let object = "teach_" + TopicLayout.slug(region.name) + "_" + spot.rawValue
                let press = JSONValue.object([
                    ("id", .string("ha-" + region.name + "-" + spot.rawValue)), ("region", .string(region.name)),
                    ("device", .string(device)), ("at", .string(spot.rawValue)),
                    ("seconds", .double(TeachCommand.defaultSeconds)),
                ]).serialized
                out.append(
                    message(
                        "button", object: object,
                        [
                            ("name", .string("Teach " + region.title + " " + spot.rawValue)),
                            ("unique_id", .string(gatewayDeviceID + "_" + object)),
                            ("command_topic", .string(command)),
                            ("payload_press", .string(press)),
                            ("icon", .string(spot == .boundary ? "mdi:map-marker-radius" : "mdi:map-marker")),
                            ("entity_category", .string("config")),
                        ], device: gatewayDevice()))
            }
        }
        return out
    }
}
