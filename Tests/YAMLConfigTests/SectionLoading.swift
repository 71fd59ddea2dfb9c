import BeaconConfig
import BeaconConfigReading

@testable import YAMLConfig

/// How the section tests read a configuration: the real loader (`ConfigurationLoader.load`) on a YAML text named
/// `t.yaml`, so every problem comes out as a user sees it.
protocol SectionLoading {
    /// The host name the loader sees (a gateway id and the ESPHome node name default to it).
    var hostname: String { get }
    /// Whether key, password and certificate files are checked (they are in the daemon).
    var checksFiles: Bool { get }
}

extension SectionLoading {
    var hostname: String { "h" }
    var checksFiles: Bool { false }

    func load(_ yaml: String) -> Result<GatewayConfiguration, ConfigErrors> {
        ConfigurationLoader.load(
            yaml: yaml, file: "t.yaml", environment: ConfigEnvironment(hostname: hostname), checksFiles: checksFiles)
    }

    /// Every problem as `t.yaml:LINE:COL: KEYPATH: MESSAGE`; none when the text loads.
    func problems(_ yaml: String) -> [String] {
        switch load(yaml) {
        case .success: []
        case let .failure(errors): errors.lines
        }
    }
}
