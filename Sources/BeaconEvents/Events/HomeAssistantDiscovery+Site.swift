import BeaconModel

extension HomeAssistantDiscovery {
    /// The gateway's site configuration entities (docs/site-config.md), announced by a gateway with `site:`, both
    /// on its retained status topic `<prefix>/<site>/site/status/<gateway>` (which it publishes after every
    /// decision, and at start):
    /// - a diagnostic `sensor` "Site configuration version": the version it runs (0: its own file alone), with
    ///   the status's `state` (as attribute `status`: Home Assistant drops an MQTT attribute named `state`),
    ///   `sha256` and `site` as attributes;
    /// - a `binary_sensor` "Site configuration problem" (`device_class: problem`): on while the last decision was a
    ///   refusal or a rollback, with its `reason`, the refused version (`subject`) and the `message` as attributes
    ///   (and `status`, `version`).
    ///
    /// A refusal is a binary sensor of its own rather than only an attribute of the version sensor: a state that
    /// turns on is what Home Assistant's automations, alerts and dashboards react to without a template, and the
    /// reason stays an attribute because the message (up to 1,000 characters) would not fit in a state (255).
    /// Missing members are read with `get` (no "template variable" warning in Home Assistant's log).
    public func siteMessages(statusTopic: String) -> [ControlMessage] {
        [
            message(
                "sensor", object: "site_version",
                [
                    ("name", .string("Site configuration version")),
                    ("unique_id", .string(gatewayDeviceID + "_site_version")),
                    ("state_topic", .string(statusTopic)),
                    ("value_template", .string("{{ value_json.version }}")),
                    ("json_attributes_topic", .string(statusTopic)),
                    (
                        "json_attributes_template",
                        .string(
                            "{{ {'status': value_json.state, 'sha256': value_json.sha256, 'site': value_json.site} | tojson }}"
                        )
                    ),
                    ("icon", .string("mdi:file-cog")),
                    ("entity_category", .string("diagnostic")),
                ], device: gatewayDevice()),
            message(
                "binary_sensor", object: "site_problem",
                [
                    ("name", .string("Site configuration problem")),
                    ("unique_id", .string(gatewayDeviceID + "_site_problem")),
                    ("state_topic", .string(statusTopic)),
                    ("value_template", .string(HomeAssistantDiscovery.siteProblemTemplate)),
                    ("payload_on", .string("ON")),
                    ("payload_off", .string("OFF")),
                    ("device_class", .string("problem")),
                    ("json_attributes_topic", .string(statusTopic)),
                    ("json_attributes_template", .string(HomeAssistantDiscovery.siteProblemAttributesTemplate)),
                    ("entity_category", .string("diagnostic")),
                ], device: gatewayDevice()),
        ]
    }

    /// On for `refused` and `rolled_back`, off for `applied`, `applying` and `local`.
    static let siteProblemTemplate = "{{ 'ON' if value_json.state in ['refused', 'rolled_back'] else 'OFF' }}"

    /// The last decision: its state (`status`), the version running, the reason code and the message.
    static let siteProblemAttributesTemplate =
        "{{ {'status': value_json.state, 'version': value_json.version, 'subject': value_json.get('subject'), "
        + "'reason': value_json.get('reason'), 'message': value_json.get('message')} | tojson }}"
}
