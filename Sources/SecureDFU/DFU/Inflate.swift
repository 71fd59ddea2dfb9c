import CZlib

/// Raw DEFLATE (RFC 1951, no zlib or gzip header) through zlib, for the entries of a DFU package's `.zip`.
/// Untrusted input: the output may not grow past `limit` (a zip bomb stops there), and it is inflated in chunks
/// of at most `chunkBytes`, so what is allocated is at most the output kept plus one chunk, whatever the stream
/// claims. A stream that ends early, invalid data and bytes after the stream's end are failures.
/// The corresponding C functions are `inflateInit2` (window bits -15: raw), `inflate` and `inflateEnd`.
public enum Inflate {
    /// Why the stream could not be decoded: the compressed bytes consumed when it failed, and the reason.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        public var description: String { "\(reason) (at compressed byte \(offset))" }
    }

    /// The most inflated in one `inflate` call.
    static let chunkBytes = 64 << 10

    /// Decodes `input` (a raw DEFLATE stream, nothing after it); fails once the output would exceed `limit`.
    public static func decompress(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        let limit = max(limit, 0)
        guard input.count <= UInt32.max else { throw Failure(offset: 0, reason: "the stream is over 4 GiB") }
        // zlib keeps the stream's address in its state and checks it on every call: the stream stays at one place.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard bb_inflate_init_raw(stream) == Z_OK else {
            throw Failure(offset: 0, reason: "zlib cannot start an inflate stream")
        }
        defer { inflateEnd(stream) }
        // One byte of room past the limit, so a stream that goes on is caught without inflating any further.
        let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: limit < chunkBytes ? limit + 1 : chunkBytes)
        defer { chunk.deallocate() }
        var output: [UInt8] = []
        let outcome = input.withUnsafeBufferPointer { bytes -> Failure? in
            // zlib only reads through next_in (it is not const unless ZLIB_CONST is defined).
            stream.pointee.next_in = bytes.baseAddress.map { UnsafeMutablePointer(mutating: $0) }
            stream.pointee.avail_in = UInt32(bytes.count)
            func failure(_ reason: String) -> Failure { Failure(offset: Int(stream.pointee.total_in), reason: reason) }
            while true {
                let left = limit - output.count
                let room = left < chunk.count ? left + 1 : chunk.count
                stream.pointee.next_out = chunk.baseAddress
                stream.pointee.avail_out = UInt32(room)
                let status = inflate(stream, Z_NO_FLUSH)
                let produced = room - Int(stream.pointee.avail_out)
                guard produced <= left else { return failure("the output exceeds \(limit) bytes") }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_OK:
                    continue  // progress was made; the input and the limit bound the turns
                case Z_STREAM_END:
                    let after = stream.pointee.avail_in
                    return after == 0 ? nil : failure("\(after) bytes after the end of the stream")
                case Z_BUF_ERROR:
                    // No progress with room to write: every input byte is used and the stream has not ended.
                    return failure("the stream ends early")
                case Z_DATA_ERROR:
                    return failure(stream.pointee.msg.map { String(cString: $0) } ?? "invalid data")
                case Z_MEM_ERROR:
                    return failure("zlib is out of memory")
                default:
                    return failure("zlib's inflate returned \(status)")
                }
            }
        }
        if let outcome { throw outcome }
        return output
    }
}
