import CYAML

/// The YAML configuration loader: the only module that talks to libyaml.
public enum YAMLLibrary {
    /// The corresponding C function is `yaml_get_version`.
    public static var version: (Int, Int, Int) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        yaml_get_version(&major, &minor, &patch)
        return (Int(major), Int(minor), Int(patch))
    }
}
