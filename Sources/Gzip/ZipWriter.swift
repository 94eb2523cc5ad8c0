import CZlib

/// A ZIP archive (PKWARE APPNOTE 6.3) made as a stream: each entry is deflated as its bytes come
/// and followed by a data descriptor (its CRC-32 and sizes, known only at its end), and the
/// central directory closes the archive. Every call returns the archive's next bytes, to be sent
/// on at once: an entry's data is never held whole. No ZIP64: an archive stays under 4 GiB and
/// 65,535 entries (`canAdd` says whether another entry of a size fits).
public final class ZipWriter {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    private struct Entry {
        var name: [UInt8]
        var offset: UInt32
        var crc: UInt32 = 0
        var compressed: UInt32 = 0
        var size: UInt32 = 0
    }

    /// MS-DOS time and date of every entry (the archive's making).
    private let dosTime: UInt16, dosDate: UInt16
    private var entries: [Entry] = []
    private var written: UInt64 = 0
    private var stream = z_stream()
    private var open = false
    private var crc: uLong = 0
    private var size: UInt64 = 0

    public static let maxEntries = 65_535
    public static let maxBytes: UInt64 = 0xFFFF_FFFF

    /// `modified`: the entries' time, in UTC (year 1980 to 2107).
    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let year = min(max(year, 1980), 2107)
        dosTime = UInt16(hour << 11 | minute << 5 | second / 2)
        dosDate = UInt16((year - 1980) << 9 | month << 5 | day)
    }

    deinit {
        if open { deflateEnd(&stream) }
    }

    /// Bytes written so far.
    public var byteCount: UInt64 { written }

    /// Whether another entry of about `bytes` (uncompressed: deflate never grows data much) and
    /// the central directory still fit.
    public func canAdd(bytes: UInt64, name: String) -> Bool {
        entries.count + 1 < Self.maxEntries
            && written + bytes + bytes / 100 + 1_024 + UInt64(entries.count + 1) * UInt64(46 + 256) + 22 < Self.maxBytes
    }

    /// Starts an entry: its local header.
    public func begin(_ name: String) throws(Failure) -> [UInt8] {
        guard !open else { throw Failure(description: "an entry is still open") }
        guard entries.count < Self.maxEntries - 1 else { throw Failure(description: "more entries than a ZIP without ZIP64 holds") }
        let nameBytes = Array(name.utf8.prefix(1_024))
        guard pacer_deflate_init_raw(&stream, 6) == Z_OK else { throw Failure(description: "zlib could not start deflating") }
        open = true
        crc = crc32(0, nil, 0)
        size = 0
        entries.append(Entry(name: nameBytes, offset: UInt32(written)))
        var header = Self.little32(0x0403_4b50)
        header += Self.little16(20) + Self.little16(Self.flags) + Self.little16(8) + Self.little16(dosTime) + Self.little16(dosDate)
        header += Self.little32(0) + Self.little32(0) + Self.little32(0)  // in the data descriptor
        header += Self.little16(UInt16(nameBytes.count)) + Self.little16(0) + nameBytes
        return count(header)
    }

    /// The entry's next bytes, deflated (often nothing yet: zlib gathers a block first).
    public func write(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        guard open else { throw Failure(description: "no entry is open") }
        crc = bytes.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt($0.count)) }
        size += UInt64(bytes.count)
        return count(try deflate(bytes, flush: Z_NO_FLUSH))
    }

    /// Ends the entry: the rest of its data and its data descriptor.
    public func end() throws(Failure) -> [UInt8] {
        guard open else { throw Failure(description: "no entry is open") }
        var output = try deflate([], flush: Z_FINISH)
        let compressed = UInt64(stream.total_out)
        deflateEnd(&stream)
        open = false
        guard size < Self.maxBytes, compressed < Self.maxBytes else { throw Failure(description: "an entry of 4 GiB or more needs ZIP64") }
        entries[entries.count - 1].crc = UInt32(crc)
        entries[entries.count - 1].compressed = UInt32(compressed)
        entries[entries.count - 1].size = UInt32(size)
        output += Self.little32(0x0807_4b50) + Self.little32(UInt32(crc)) + Self.little32(UInt32(compressed)) + Self.little32(UInt32(size))
        return count(output)
    }

    /// One whole entry.
    public func add(_ name: String, _ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        var output = try begin(name)
        output += try write(bytes)
        output += try end()
        return output
    }

    /// The central directory and its end: the archive's last bytes.
    public func finish() throws(Failure) -> [UInt8] {
        guard !open else { throw Failure(description: "an entry is still open") }
        let start = written
        var directory: [UInt8] = []
        for entry in entries {
            directory += Self.little32(0x0201_4b50) + Self.little16(20) + Self.little16(20) + Self.little16(Self.flags) + Self.little16(8)
            directory += Self.little16(dosTime) + Self.little16(dosDate) + Self.little32(entry.crc) + Self.little32(entry.compressed)
            directory += Self.little32(entry.size) + Self.little16(UInt16(entry.name.count)) + Self.little16(0) + Self.little16(0)
            directory += Self.little16(0) + Self.little16(0) + Self.little32(0) + Self.little32(entry.offset) + entry.name
        }
        let size = UInt64(directory.count)
        guard start + size < Self.maxBytes else { throw Failure(description: "the archive passed 4 GiB, which needs ZIP64") }
        directory += Self.little32(0x0605_4b50) + Self.little16(0) + Self.little16(0) + Self.little16(UInt16(entries.count))
        directory += Self.little16(UInt16(entries.count)) + Self.little32(UInt32(size)) + Self.little32(UInt32(start)) + Self.little16(0)
        return count(directory)
    }

    /// Bit 3: sizes and CRC in the data descriptor; bit 11: names in UTF-8.
    private static let flags: UInt16 = 0x0808

    private func count(_ bytes: [UInt8]) -> [UInt8] {
        written += UInt64(bytes.count)
        return bytes
    }

    private func deflate(_ input: [UInt8], flush: Int32) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var status: Int32 = Z_OK
        input.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            repeat {
                buffer.withUnsafeMutableBufferPointer { destination in
                    stream.next_out = destination.baseAddress
                    stream.avail_out = uInt(destination.count)
                    status = CZlib.deflate(&stream, flush)
                    output += destination.prefix(destination.count - Int(stream.avail_out))
                }
            } while status == Z_OK && (stream.avail_out == 0 || flush == Z_FINISH)
            stream.next_in = nil
        }
        guard status == Z_OK || status == Z_BUF_ERROR || status == Z_STREAM_END else {
            throw Failure(description: "zlib could not deflate (status \(status))")
        }
        return output
    }

    private static func little16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private static func little32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
}
