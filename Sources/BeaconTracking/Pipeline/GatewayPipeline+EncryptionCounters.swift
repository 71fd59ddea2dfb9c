/// The BTHome replay counters across restarts (`EncryptedCounterGuard`): the daemon restores the saved ones
/// before the first report and saves the changed ones with the rest of its state.
extension GatewayPipeline {
    /// Restores the last accepted `encryption_counter` per beacon id (from the database).
    public mutating func restoreEncryptionCounters(_ counters: [String: Int64]) {
        replayGuard.restore(counters)
    }

    /// Counters accepted since the last call, to save (beacon id -> counter).
    public mutating func takeEncryptionCounters() -> [String: Int64] {
        replayGuard.takeChanges()
    }
}
