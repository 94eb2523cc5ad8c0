import CLoadedObjects
import Glibc

/// Gives back to the kernel the memory pacerd touched once and no longer uses, so its RSS is what
/// a recording actually needs (a Pi Zero 2 has 512 MB for everything).
///
/// Most of a fresh pacerd's RSS is code pages of its own binary and of the libraries: start-up
/// code (config, store recovery, the Swift runtime's and Foundation's initialisation) plus the
/// kernel's fault-around, which maps 16 neighbouring pages with every page of code touched.
/// `MADV_DONTNEED` on a read-only segment of a loaded object only unmaps its pages from this
/// process: they stay in the page cache (shared and reclaimable), and a page still in use is
/// mapped again on its next touch. Writable segments are never touched (that would discard data),
/// nor an object with text relocations, whose code pages hold private changes.
enum ResidentMemory {
    /// VmRSS in KiB, or nil when /proc is not readable.
    static func residentKiB() -> Int? {
        guard let status = readFile("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            // "VmRSS:\t   16924 kB": a tab, then padding.
            return Int(line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// Unmaps the read-only segments of every loaded object and returns free heap pages.
    /// Returns how many bytes of segments were advised.
    @discardableResult
    static func trim() -> Int {
        var advised = 0
        withUnsafeMutablePointer(to: &advised) { total in
            pacer_each_read_only_segment({ start, length, context in
                guard let start, let context else { return }
                if madvise(start, length, MADV_DONTNEED) == 0 { context.assumingMemoryBound(to: Int.self).pointee += length }
            }, total)
        }
        // Free chunks at the top and in the middle of every arena go back too.
        _ = pacer_malloc_trim()
        return advised
    }

    private static func readFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
