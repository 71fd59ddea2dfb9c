/// One level of an MQTT topic (the gateway's, a beacon's, a region's or a room's name in a topic), shared by every
/// module that builds topics: BeaconEvents' `TopicLayout` and BeaconRooms' `RoomTopics`.
public enum TopicLevel {
    /// Makes `text` safe as one topic level: `/`, `+`, `#` and NUL become `_`; empty becomes `_`.
    ///
    /// Works on the UTF-8 bytes: the four are ASCII, and no byte of a multi-byte sequence is below 0x80, so
    /// replacing those bytes is replacing those characters. Text without any of them (every canonical id) is
    /// returned as it is, without a copy; this runs for every published event's topic.
    public static func safe(_ text: String) -> String {
        guard !text.isEmpty else { return "_" }
        @inline(__always) func reserved(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "/") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") || byte == 0
        }
        guard text.utf8.contains(where: reserved) else { return text }
        return String(decoding: text.utf8.map { reserved($0) ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
    }
}
