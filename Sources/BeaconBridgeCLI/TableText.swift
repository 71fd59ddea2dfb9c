import BeaconModel

/// Text helpers shared by the `simulate` tables (single-gateway, rooms, both frontiers).
enum TableText {
    /// `text` padded with spaces to `width`, or followed by one space when it is as wide or wider.
    static func cell(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    /// `value` rounded to 1 / `scale`; "-" when there is none.
    static func rounded(_ value: Double?, _ scale: Double = 10) -> String {
        value.map { String(($0 * scale).rounded() / scale) } ?? "-"
    }

    /// `value` rounded to 1 / `scale`; "missed" when it is not finite (a frontier's missed changes).
    static func roundedOrMissed(_ value: Double, _ scale: Double) -> String {
        value.isFinite ? String((value * scale).rounded() / scale) : "missed"
    }

    /// The same as a JSON number; null when it is not finite.
    static func json(_ value: Double, _ scale: Double) -> JSONValue {
        value.isFinite ? .double((value * scale).rounded() / scale) : .null
    }
}
