import BeaconConfig
import BeaconConfigReading
import YAMLConfig

/// libFuzzer entry for the configuration loader (`make fuzz-config`, scripts/fuzz-config.sh): any bytes
/// through libyaml, the tree builder and every section decoder must produce a result or issues, never a crash
/// (AddressSanitizer watches the libyaml pointer handling).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let document = YAMLParser.parse(bytes, file: "fuzz.yaml")
    if let root = document.root {
        let (configuration, issues) = GatewayConfiguration.read(
            root, file: "fuzz.yaml",
            environment: ConfigEnvironment(hostname: "fuzz"))
        precondition(issues.allSatisfy { !$0.message.isEmpty })
        _ = configuration.regions.count
    } else {
        precondition(!document.issues.isEmpty, "no tree and no issue")
    }
    return 0
}
