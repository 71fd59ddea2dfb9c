/// The BTHome v2 object ids (bthome.io "format" specification, as Home Assistant's `bthome-ble` reads them): length,
/// value type, scale, field name, unit, and the key Home Assistant's integration uses.
extension BTHome {
    enum ValueKind: Sendable, Equatable {
        case unsigned, signed, binary, text, raw, timestamp, button, dimmer, command, deviceTypeID, firmware
    }

    package struct Object: Sendable {
        package var id: UInt8
        /// Value length in bytes; text, raw and command objects carry their own length byte instead.
        package var length: Int
        var kind: ValueKind
        /// value = raw × multiplier / 10^decimals; `roundTo` decimals for a multiplier other than 1 (0.35 steps).
        var multiplier: Int = 1
        var decimals: Int = 0
        package var name: String
        package var unit: String?
        /// Home Assistant's key for the entity (`bthome-ble`'s device class name), nil for device information.
        package var key: String?
        /// Home Assistant `device_class` for discovery, where one exists.
        package var deviceClass: String?

        var roundTo: Int { multiplier == 1 ? decimals : max(0, decimals - 1) }
        var isVariableLength: Bool { kind == .text || kind == .raw || kind == .command }
    }

    // Shorthands for the table below.
    private static func u(
        _ id: UInt8, _ length: Int, _ decimals: Int, _ name: String, _ unit: String?, _ key: String,
        _ deviceClass: String? = nil
    ) -> Object {
        Object(
            id: id, length: length, kind: .unsigned, decimals: decimals, name: name, unit: unit, key: key,
            deviceClass: deviceClass)
    }
    private static func s(
        _ id: UInt8, _ length: Int, _ decimals: Int, _ name: String, _ unit: String?, _ key: String,
        _ deviceClass: String? = nil
    ) -> Object {
        Object(
            id: id, length: length, kind: .signed, decimals: decimals, name: name, unit: unit, key: key,
            deviceClass: deviceClass)
    }
    private static func b(_ id: UInt8, _ name: String, _ key: String) -> Object {
        Object(
            id: id, length: 1, kind: .binary, name: name, unit: nil, key: key, deviceClass: key == "generic" ? nil : key
        )
    }

    /// Every object id, ascending.
    static let objects: [Object] = [
        u(0x00, 1, 0, "packet_id", nil, "packet_id"),
        u(0x01, 1, 0, "battery_pct", "%", "battery", "battery"),
        s(0x02, 2, 2, "temperature_c", "°C", "temperature", "temperature"),
        u(0x03, 2, 2, "humidity_pct", "%", "humidity", "humidity"),
        u(0x04, 3, 2, "pressure_hpa", "hPa", "pressure", "pressure"),
        u(0x05, 3, 2, "illuminance_lx", "lx", "illuminance", "illuminance"),
        u(0x06, 2, 2, "mass_kg", "kg", "mass", "weight"),
        u(0x07, 2, 2, "mass_lb", "lb", "mass", "weight"),
        s(0x08, 2, 2, "dew_point_c", "°C", "dew_point", "temperature"),
        u(0x09, 1, 0, "count", nil, "count"),
        u(0x0A, 3, 3, "energy_kwh", "kWh", "energy", "energy"),
        u(0x0B, 3, 2, "power_w", "W", "power", "power"),
        u(0x0C, 2, 3, "voltage_v", "V", "voltage", "voltage"),
        u(0x0D, 2, 0, "pm25_ugm3", "µg/m³", "pm25", "pm25"),
        u(0x0E, 2, 0, "pm10_ugm3", "µg/m³", "pm10", "pm10"),
        b(0x0F, "generic", "generic"),
        b(0x10, "power_on", "power"),
        b(0x11, "opening", "opening"),
        u(0x12, 2, 0, "co2_ppm", "ppm", "carbon_dioxide", "carbon_dioxide"),
        u(0x13, 2, 0, "voc_ugm3", "µg/m³", "volatile_organic_compounds", "volatile_organic_compounds"),
        u(0x14, 2, 2, "moisture_pct", "%", "moisture", "moisture"),
        b(0x15, "battery_low", "battery"),
        b(0x16, "battery_charging", "battery_charging"),
        b(0x17, "carbon_monoxide", "carbon_monoxide"),
        b(0x18, "cold", "cold"),
        b(0x19, "connectivity", "connectivity"),
        b(0x1A, "door", "door"),
        b(0x1B, "garage_door", "garage_door"),
        b(0x1C, "gas_detected", "gas"),
        b(0x1D, "heat", "heat"),
        b(0x1E, "light", "light"),
        b(0x1F, "lock", "lock"),
        b(0x20, "moisture_detected", "moisture"),
        b(0x21, "motion", "motion"),
        b(0x22, "moving", "moving"),
        b(0x23, "occupancy", "occupancy"),
        b(0x24, "plug", "plug"),
        b(0x25, "presence", "presence"),
        b(0x26, "problem", "problem"),
        b(0x27, "running", "running"),
        b(0x28, "safety", "safety"),
        b(0x29, "smoke", "smoke"),
        b(0x2A, "sound", "sound"),
        b(0x2B, "tamper", "tamper"),
        b(0x2C, "vibration", "vibration"),
        b(0x2D, "window", "window"),
        u(0x2E, 1, 0, "humidity_pct", "%", "humidity", "humidity"),
        u(0x2F, 1, 0, "moisture_pct", "%", "moisture", "moisture"),
        Object(id: 0x3A, length: 1, kind: .button, name: "button", unit: nil, key: "button"),
        Object(id: 0x3B, length: 1, kind: .command, name: "command", unit: nil, key: "command"),
        Object(id: 0x3C, length: 2, kind: .dimmer, name: "dimmer", unit: nil, key: "dimmer"),
        u(0x3D, 2, 0, "count", nil, "count"),
        u(0x3E, 4, 0, "count", nil, "count"),
        s(0x3F, 2, 1, "rotation_deg", "°", "rotation"),
        u(0x40, 2, 0, "distance_mm", "mm", "distance", "distance"),
        u(0x41, 2, 1, "distance_m", "m", "distance", "distance"),
        u(0x42, 3, 3, "duration_s", "s", "duration", "duration"),
        u(0x43, 2, 3, "current_a", "A", "current", "current"),
        u(0x44, 2, 2, "speed_ms", "m/s", "speed", "speed"),
        s(0x45, 2, 1, "temperature_c", "°C", "temperature", "temperature"),
        u(0x46, 1, 1, "uv_index", nil, "uv_index"),
        u(0x47, 2, 1, "volume_l", "L", "volume", "volume"),
        u(0x48, 2, 0, "volume_ml", "mL", "volume", "volume"),
        u(0x49, 2, 3, "volume_flow_rate_m3h", "m³/h", "volume_flow_rate", "volume_flow_rate"),
        u(0x4A, 2, 1, "voltage_v", "V", "voltage", "voltage"),
        u(0x4B, 3, 3, "gas_m3", "m³", "gas", "gas"),
        u(0x4C, 4, 3, "gas_m3", "m³", "gas", "gas"),
        u(0x4D, 4, 3, "energy_kwh", "kWh", "energy", "energy"),
        u(0x4E, 4, 3, "volume_l", "L", "volume", "volume"),
        u(0x4F, 4, 3, "water_l", "L", "water", "water"),
        Object(id: 0x50, length: 4, kind: .timestamp, name: "timestamp", unit: nil, key: "timestamp"),
        u(0x51, 2, 3, "acceleration_ms2", "m/s²", "acceleration"),
        u(0x52, 2, 3, "gyroscope_dps", "°/s", "gyroscope"),
        Object(id: 0x53, length: 1, kind: .text, name: "text", unit: nil, key: "text"),
        Object(id: 0x54, length: 1, kind: .raw, name: "raw", unit: nil, key: "raw"),
        u(0x55, 4, 3, "volume_storage_l", "L", "volume_storage", "volume_storage"),
        u(0x56, 2, 0, "conductivity_us_cm", "µS/cm", "conductivity", "conductivity"),
        s(0x57, 1, 0, "temperature_c", "°C", "temperature", "temperature"),
        Object(
            id: 0x58, length: 1, kind: .signed, multiplier: 35, decimals: 2, name: "temperature_c", unit: "°C",
            key: "temperature", deviceClass: "temperature"),
        s(0x59, 1, 0, "count", nil, "count"),
        s(0x5A, 2, 0, "count", nil, "count"),
        s(0x5B, 4, 0, "count", nil, "count"),
        s(0x5C, 4, 2, "power_w", "W", "power", "power"),
        s(0x5D, 2, 3, "current_a", "A", "current", "current"),
        u(0x5E, 2, 2, "direction_deg", "°", "direction"),
        u(0x5F, 2, 1, "precipitation_mm", "mm", "precipitation", "precipitation"),
        u(0x60, 1, 0, "channel", nil, "channel"),
        u(0x61, 2, 0, "rotational_speed_rpm", "rpm", "rotational_speed"),
        s(0x62, 4, 6, "speed_ms", "m/s", "speed", "speed"),
        s(0x63, 4, 6, "acceleration_ms2", "m/s²", "acceleration"),
        u(0x64, 1, 0, "light_level", nil, "light_level"),
        u(0x65, 1, 0, "settings_revision", nil, "settings_revision"),
        Object(id: 0xF0, length: 2, kind: .deviceTypeID, name: "device_type_id", unit: nil, key: nil),
        Object(id: 0xF1, length: 4, kind: .firmware, name: "firmware_version", unit: nil, key: nil),
        Object(id: 0xF2, length: 3, kind: .firmware, name: "firmware_version", unit: nil, key: nil),
    ]

    /// Index into `objects` by id (-1: unknown id).
    static let objectIndex: [Int16] = {
        var index = [Int16](repeating: -1, count: 256)
        for (position, object) in objects.enumerated() { index[Int(object.id)] = Int16(position) }
        return index
    }()

    /// Button event names (object 0x3A); 0 and unknown codes are no event.
    static let buttonEvents: [UInt8: String] = [
        0x01: "press", 0x02: "double_press", 0x03: "triple_press", 0x04: "long_press",
        0x05: "long_double_press", 0x06: "long_triple_press", 0x80: "hold_press", 0x81: "hold_release",
    ]
    /// Dimmer event names (object 0x3C, then the number of steps).
    static let dimmerEvents: [UInt8: String] = [0x01: "rotate_left", 0x02: "rotate_right"]
    /// Command opcodes (object 0x3B: a length byte whose low 5 bits count the argument bytes, the opcode, arguments).
    package static let commandEvents: [UInt8: String] = [
        0x00: "off", 0x01: "on", 0x02: "toggle", 0x03: "step_up", 0x04: "step_down",
    ]
}
