import BeaconConfig
import ESPHomeProxy

/// `beaconbridge esphome-mdns [--config FILE]`: prints the Avahi static service file that announces this
/// gateway's ESPHome Bluetooth proxy as `_esphomelib._tcp` (the same name, port and TXT records as the daemon's
/// own `avahi-publish-service` announcement), for `/etc/avahi/services/` (docs/home-assistant.md, "mDNS
/// discovery"). The node name and MAC are the ones the daemon would use on this machine.
enum ESPHomeMDNSCommand {
    static let help = """
        Usage: beaconbridge esphome-mdns [--config FILE]

        Prints an Avahi service file announcing the ESPHome Bluetooth proxy (esphome_api) as _esphomelib._tcp
        with the TXT records Home Assistant's ESPHome discovery reads (mac, friendly_name, api_encryption when
        a key is configured). Install it where avahi-daemon reads it and set esphome_api.mdns: false:
          beaconbridge esphome-mdns | sudo tee /etc/avahi/services/beaconbridge-esphome.service
        Exit codes: 0 printed, 64 usage, 66 file missing or unreadable, 78 invalid configuration or
        esphome_api not enabled.
        """

    static func run(_ arguments: [String]) -> Int32 {
        let location: ConfigLocation
        switch ConfigCommandLine.parse(
            arguments, command: "esphome-mdns", help: help,
            environment: ProcessEnvironment.current())
        {
        case .parsed(let parsed): location = parsed.location
        case .exit(let code): return code
        }
        let configuration: GatewayConfiguration
        switch location.load(command: "esphome-mdns") {
        case .loaded(let loaded): configuration = loaded
        case .failed(let exitCode): return exitCode
        }
        let settings = configuration.esphomeAPI
        guard settings.enabled else {
            Output.stderr(
                "beaconbridge esphome-mdns: esphome_api.enabled is not true in \(location.path): the proxy is "
                    + "off, so there is nothing to announce")
            return ExitCode.config
        }
        let identity = DaemonESPHome.identity(
            configuration: configuration, hostname: DaemonESPHome.hostName(),
            usesPassword: settings.passwordFile != nil || settings.passwordEnv != nil)
        let encrypted = settings.encryptionKeyFile != nil || settings.encryptionKeyEnv != nil
        Output.write(
            MDNSAnnouncement.serviceFile(
                name: identity.name, port: settings.port,
                txt: MDNSAnnouncement.txtRecords(identity: identity, encrypted: encrypted)),
            to: 1)
        return ExitCode.ok
    }
}
