import CMosquitto

/// The MQTT adapter: the only module that talks to libmosquitto.
public enum MQTTLibrary {
    /// libmosquitto's version as (major, minor, revision). The corresponding C function is `mosquitto_lib_version`.
    public static var version: (Int, Int, Int) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return (Int(major), Int(minor), Int(revision))
    }
}
