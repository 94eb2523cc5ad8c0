import CZlib

/// gzip (RFC 1952) through zlib, what `Content-Encoding: gzip` means: the device compresses a
/// run's chunks, the cloud inflates them to check and to serve them. The one module over CZlib.
public enum Gzip {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// One complete gzip stream of `input`. Level 9 by default: a chunk is compressed once and
    /// kept in the outbox, and sent over a metered link, so the smallest bytes are worth the time.
    public static func compress(_ input: [UInt8], level: Int32 = 9) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        var status = pacer_deflate_init_gzip(&stream, level)
        guard status == Z_OK else { throw Failure(description: "zlib could not start deflating (status \(status))") }
        defer { deflateEnd(&stream) }
        // deflateBound is enough for one Z_FINISH call; the gzip header and trailer are within it,
        // the slack is for zlib versions that count them differently.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
        status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw Failure(description: "zlib could not deflate (status \(status))") }
        return Array(output.prefix(Int(stream.total_out)))
    }

    /// The decompressed bytes of one complete gzip stream; fails on anything else, on trailing
    /// bytes, and past `limit` bytes out (a small bomb must not fill the memory).
    public static func decompress(_ input: [UInt8], limit: Int = 64 << 20) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        do {
            try inflate(input) { piece in
                output += piece
                if output.count > limit { throw Failure(description: "it inflates to more than \(limit) bytes") }
            }
        } catch {
            throw (error as? Failure) ?? Failure(description: "\(error)")
        }
        return output
    }

    /// Inflates one complete gzip stream, handing the output to `each` 64 KiB at a time as it
    /// comes, so a reader that stops early (a cap) stops the inflating too. Throws `Failure` for
    /// anything but one complete gzip stream, and what `each` throws.
    public static func inflate(_ input: [UInt8], _ each: (ArraySlice<UInt8>) throws -> Void) throws {
        var stream = z_stream()
        guard pacer_inflate_init_gzip(&stream) == Z_OK else { throw Failure(description: "zlib could not start inflating") }
        defer { inflateEnd(&stream) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        try input.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            while true {
                let status = buffer.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = buffer.count - Int(stream.avail_out)
                if produced > 0 { try each(buffer[0..<produced]) }
                switch status {
                case Z_STREAM_END:
                    guard stream.avail_in == 0 else { throw Failure(description: "bytes follow the end of the gzip stream") }
                    return
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    throw Failure(description: "the gzip stream is truncated")
                default:
                    let reason = stream.msg.map { String(cString: $0) } ?? "status \(status)"
                    throw Failure(description: "not valid gzip: \(reason)")
                }
            }
        }
    }
}
