import BeaconFormats

extension ScannerSettings {
    /// The source these settings describe: the live `HCIScanner` on `adapter` (recording to `record` when
    /// set) or a `ReplaySource` for `replay:FILE`. Nothing is opened until `events()`, except the recording
    /// file, created here so that an unwritable path fails at start.
    /// - Parameter onNotice: scanner notices (adapter opened, supervision steps), on the reading thread.
    public func makeSource(onNotice: @escaping @Sendable (HCIScannerNotice) -> Void = { _ in }) throws
        -> any HCIEventSource
    {
        switch source {
        case let .replay(path):
            return ReplaySource(
                path: path, speed: replaySpeed, maxIdleGap: replayMaxGap,
                batchWindow: effectiveBatchWindow(esphomeProxy: false))
        case .hci:
            let recorder = try record.map { try BTSnoopFileRecorder(path: $0) }
            return HCIScanner(settings: self, recorder: recorder, onNotice: onNotice)
        }
    }
}
