import CZlib

/// gzip (RFC 1952) through zlib: what `Content-Encoding: gzip` means.
public enum Gzip {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var code: Int32
        public var description: String { "zlib error \(code)" }
    }

    public static func compress(_ input: [UInt8], level: Int32 = 9) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        var status = pacer_deflate_init_gzip(&stream, level)
        guard status == Z_OK else { throw Failure(code: status) }
        defer { deflateEnd(&stream) }
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
        guard status == Z_STREAM_END else { throw Failure(code: status) }
        return Array(output.prefix(Int(stream.total_out)))
    }

    public static func decompress(_ input: [UInt8], limit: Int = 64 << 20) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        var status = pacer_inflate_init_gzip(&stream)
        guard status == Z_OK else { throw Failure(code: status) }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        try input.withUnsafeBufferPointer { (source) throws(Failure) in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            repeat {
                let produced = chunk.withUnsafeMutableBufferPointer { destination -> Int in
                    stream.next_out = destination.baseAddress
                    stream.avail_out = uInt(destination.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return destination.count - Int(stream.avail_out)
                }
                guard status == Z_OK || status == Z_STREAM_END else { throw Failure(code: status) }
                output += chunk.prefix(produced)
                guard output.count <= limit else { throw Failure(code: Z_BUF_ERROR) }
            } while status != Z_STREAM_END && (stream.avail_in > 0 || stream.avail_out == 0)
        }
        guard status == Z_STREAM_END else { throw Failure(code: Z_DATA_ERROR) }
        return output
    }
}
