/// Which progress reports of a Secure DFU transfer go out over MQTT: the first, then one when at least
/// `interval` seconds passed or the percentage rose by `step` since the last one sent, and always 100 %.
/// A value type fed the transfer's `DFUProgress` with the time (no clock read), so a flood of receipts (one per
/// 12 packets, every few ms on a fast link) costs at most one message per second or per 5 %.
public struct DFUProgressThrottle: Sendable, Equatable {
    public var interval: Double
    public var step: Int
    private var lastTime: Double?
    private var lastPercent = -1

    public init(interval: Double = 1, step: Int = 5) {
        self.interval = interval
        self.step = step
    }

    /// Whether `progress` at `now` is to be sent (and if so, remembers it).
    public mutating func admit(_ progress: DFUProgress, at now: Double) -> Bool {
        guard progress.percent != lastPercent else { return false }
        let due: Bool
        if let lastTime {
            due = progress.percent >= 100 || progress.percent >= lastPercent + step || now - lastTime >= interval
        } else {
            due = true
        }
        guard due else { return false }
        lastTime = now
        lastPercent = progress.percent
        return true
    }
}
