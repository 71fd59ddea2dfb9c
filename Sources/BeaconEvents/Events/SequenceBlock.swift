/// A block of sequence numbers reserved in durable storage before use, so a crash can skip numbers but
/// never reuse one. The store hands out `first ..< end`; the encoder takes from the front.
public struct SequenceBlock: Sendable, Equatable {
    public private(set) var next: UInt64
    public let end: UInt64

    public init(first: UInt64, end: UInt64) {
        precondition(first <= end, "empty range reversed")
        self.next = first
        self.end = end
    }

    /// An exhausted block: the first `take()` asks for a reservation.
    public static let empty = SequenceBlock(first: 0, end: 0)

    public var remaining: UInt64 { end - next }

    /// The next number, or nil when the block is used up.
    public mutating func take() -> UInt64? {
        guard next < end else { return nil }
        defer { next += 1 }
        return next
    }
}
