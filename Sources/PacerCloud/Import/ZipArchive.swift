import Gzip

/// The files of a zip archive (a runner's export of many activities), read from its central
/// directory: stored entries as they are, deflated ones inflated by zlib (each wrapped as the
/// gzip stream it equals: the same raw deflate data, with the entry's CRC-32 and size as the
/// trailer, so zlib checks the CRC too). Every offset and size is bounds-checked; an encrypted,
/// ZIP64 or otherwise compressed entry is refused by name.
enum ZipArchive {
    /// The most entries read from one archive.
    static let maxEntries = 1_000

    static func isZip(_ bytes: [UInt8]) -> Bool { bytes.count >= 4 && Array(bytes[0..<4]) == [0x50, 0x4B, 0x03, 0x04] }

    /// The archive's files, in the central directory's order (folders and macOS's `__MACOSX/`
    /// copies left out); `maxBytes`: the most all of them may inflate to.
    static func entries(_ bytes: [UInt8], maxBytes: Int) throws(ImportError) -> [(name: String, bytes: [UInt8])] {
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        // The end of central directory record: the last one, within the 64 KiB comment's reach.
        let lowest = max(0, bytes.count - 22 - 65_535)
        guard bytes.count >= 22, let end = stride(from: bytes.count - 22, through: lowest, by: -1).first(where: { u32($0) == 0x0605_4B50 }) else {
            throw ImportError("zip: no end of central directory: the archive is truncated or no zip")
        }
        let count = u16(end + 10), directory = u32(end + 16)
        guard count <= maxEntries else { throw ImportError("zip: \(count) entries; an import takes at most \(maxEntries)") }
        var files: [(name: String, bytes: [UInt8])] = []
        var total = 0
        var at = directory
        for _ in 0..<count {
            guard at + 46 <= bytes.count, u32(at) == 0x0201_4B50 else { throw ImportError("zip: the central directory is damaged at byte \(at)") }
            let (flags, method, crc) = (u16(at + 8), u16(at + 10), u32(at + 16))
            let (packed, size, nameLength) = (u32(at + 20), u32(at + 24), u16(at + 28))
            let next = at + 46 + nameLength + u16(at + 30) + u16(at + 32)
            let local = u32(at + 42)
            guard at + 46 + nameLength <= bytes.count else { throw ImportError("zip: the central directory is damaged at byte \(at)") }
            let name = String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            at = next
            if name.hasSuffix("/") || name.hasPrefix("__MACOSX/") { continue }
            guard flags & 1 == 0 else { throw ImportError("zip: \(name) is encrypted") }
            guard packed != 0xFFFF_FFFF, size != 0xFFFF_FFFF, local + 30 <= bytes.count, u32(local) == 0x0403_4B50 else {
                throw ImportError("zip: \(name): its entry is damaged (or ZIP64, which is not read)")
            }
            let data = local + 30 + u16(local + 26) + u16(local + 28)
            guard data + packed <= bytes.count else { throw ImportError("zip: \(name) runs past the end of the archive") }
            total += size
            guard total <= maxBytes else { throw ImportError("zip: its files are more than \(maxBytes >> 20) MB in all") }
            let raw = Array(bytes[data..<(data + packed)])
            switch method {
            case 0:
                guard packed == size else { throw ImportError("zip: \(name) is stored with two sizes") }
                files.append((name, raw))
            case 8:
                let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
                let trailer = [crc, size].flatMap { value in (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
                do { files.append((name, try Gzip.decompress(header + raw + trailer, limit: size))) } catch {
                    throw ImportError("zip: \(name) does not inflate: \(error)")
                }
            default:
                throw ImportError("zip: \(name) is compressed with method \(method); only stored and deflated entries are read")
            }
        }
        guard !files.isEmpty else { throw ImportError("zip: the archive holds no file") }
        return files
    }
}
