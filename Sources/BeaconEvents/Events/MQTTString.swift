/// The rule libmosquitto applies to every UTF-8 string of a packet (topics, client id, user name), as
/// `mosquitto_validate_utf8` does: MQTT (3.1.1 section 1.5.3, 5.0 section 1.5.4) forbids U+0000 and lets a
/// receiver refuse control characters and noncharacters; libmosquitto refuses them before anything is sent
/// (`mosquitto_new`, `mosquitto_will_set`, `mosquitto_publish` fail with `MOSQ_ERR_MALFORMED_UTF8`). The
/// configuration checks values with this rule so that `check-config` refuses what the daemon could not use.
public enum MQTTString {
    /// Why `text` is not usable as an MQTT string, or nil.
    public static func problem(_ text: String) -> String? {
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value == 0 { return "must not contain NUL" }
            if value <= 0x1F || (0x7F...0x9F).contains(value) {
                return "must not contain control characters (found \(codePoint(value)))"
            }
            if (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE {
                return "must not contain Unicode noncharacters (found \(codePoint(value)))"
            }
        }
        return nil
    }

    /// `U+000A` style.
    static func codePoint(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
