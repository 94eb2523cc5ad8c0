import CZlib

/// gzip (RFC 1952) through zlib: chunks may arrive gzipped and are stored as received, so the
/// server only inflates them to check and to serve them.
public enum Gzip {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
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
        // 16 + MAX_WBITS: gzip wrapper only (no raw deflate, no zlib wrapper).
        guard inflateInit2_(&stream, 16 + MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(description: "zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        let inputCount = input.count
        try input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(inputCount)
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

    /// gzip-compresses `input` (for tests and tools; the server never compresses).
    public static func compress(_ input: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY,
                            zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        let inputCount = input.count
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(inputCount)
            var status = Z_OK
            while status == Z_OK {
                status = buffer.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return deflate(&stream, Z_FINISH)
                }
                output.append(contentsOf: buffer[0..<(buffer.count - Int(stream.avail_out))])
            }
        }
        return output
    }
}
