import BeaconFormats
import BeaconModel
import Testing

@Suite struct ScannerSettingsTests {
    @Test func defaultsAreValid() {
        let settings = ScannerSettings()
        #expect(settings.validate().isEmpty)
        #expect(settings.scanParameters == ScanParameters(active: true, intervalUnits: 160, windowUnits: 160))
        #expect(settings.adapterSelector == .index(0))
        #expect(settings.source == .hci)
    }

    @Test func everyProblemIsReportedAtOnce() {
        var settings = ScannerSettings()
        settings.adapter = "bluetooth0"
        settings.intervalMilliseconds = 50
        settings.windowMilliseconds = 60
        settings.queueCapacity = 0
        settings.stallTimeoutSeconds = 1
        settings.record = ""
        settings.replaySpeed = -1
        let paths = settings.validate().map(\.path)
        #expect(
            paths == [
                "scanner.adapter", "scanner.window_ms", "scanner.queue_capacity", "scanner.stall_timeout_s",
                "scanner.record", "scanner.replay_speed",
            ])
        #expect(settings.scanParameters == nil)
    }

    @Test func theBatchWindowGrowsToItsMaximumUnlessTheESPHomeProxyIsOn() {
        var settings = ScannerSettings()
        #expect(settings.effectiveBatchWindow(esphomeProxy: false) == BatchWindow(minimum: 0.025, maximum: 0.1))
        #expect(settings.effectiveBatchWindow(esphomeProxy: true) == BatchWindow(minimum: 0.025, maximum: 0.025))
        settings.batchWindowMaxMilliseconds = 60
        #expect(settings.effectiveBatchWindow(esphomeProxy: true) == BatchWindow(minimum: 0.025, maximum: 0.06))
        settings.batchWindowMaxMilliseconds = 10
        #expect(settings.effectiveBatchWindow(esphomeProxy: false).maximum == 0.025)
        #expect(settings.validate().isEmpty)
        for bad in [-1, 1001, Double.nan] {
            settings.batchWindowMaxMilliseconds = bad
            #expect(settings.validate(path: "s").map(\.path) == ["s.batch_window_max_ms"])
        }
    }

    @Test func intervalOutOfRange() {
        var settings = ScannerSettings()
        settings.intervalMilliseconds = 20_000
        settings.windowMilliseconds = 1
        #expect(settings.validate(path: "s").map(\.path) == ["s.interval_ms", "s.window_ms"])
    }

    @Test(arguments: [
        ("hci0", AdapterSelector.index(0)), ("hci12", .index(12)), ("3", .index(3)),
        ("00:aa:01:00:00:00", .address(BluetoothAddress(rawValue: 0x00AA_0100_0000))),
    ])
    func adapterSelectors(text: String, selector: AdapterSelector) {
        #expect(AdapterSelector(configValue: text) == selector)
    }

    @Test(arguments: ["", "hci", "hci-1", "hciX", "usb0", "00:11:22:33:44", "hci999999", "١"])
    func badAdapterSelectors(text: String) {
        #expect(AdapterSelector(configValue: text) == nil)
    }

    @Test func sources() {
        #expect(ScannerSettings.Source(configValue: "hci") == .hci)
        #expect(ScannerSettings.Source(configValue: "replay:/tmp/a.log") == .replay(path: "/tmp/a.log"))
        #expect(ScannerSettings.Source(configValue: "replay:") == nil)
        #expect(ScannerSettings.Source(configValue: "file:/x") == nil)
        #expect(ScannerSettings.Source.replay(path: "x").configValue == "replay:x")
    }
}
