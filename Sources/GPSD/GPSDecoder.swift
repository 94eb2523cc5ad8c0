internal import CGPS
import PacerCore

/// Decodes gpsd JSON lines with libgps itself, so a replayed log and a live socket are read by
/// the same parser.
///
/// Owns one `gps_data_t` (about 24 KB, see `libgpsStateSize`) allocated once and reused for
/// every line, plus one reusable C buffer for the line. Deliberately not Sendable: one owner
/// decodes one stream.
public final class GPSDecoder {
    private let gps: UnsafeMutablePointer<gps_data_t>
    private let fix: UnsafePointer<gps_fix_t>
    /// libgps parses from a NUL-terminated `char *`; grown on demand, never shrunk.
    private var line: UnsafeMutablePointer<CChar>
    private var lineCapacity: Int

    /// `MemoryLayout<gps_data_t>.size`: too large to copy per line or to keep on the stack.
    public static var libgpsStateSize: Int { MemoryLayout<gps_data_t>.size }

    public init() {
        let size = MemoryLayout<gps_data_t>.size
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: size, alignment: MemoryLayout<gps_data_t>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        gps = raw.bindMemory(to: gps_data_t.self, capacity: 1)
        fix = UnsafePointer(
            (raw + MemoryLayout<gps_data_t>.offset(of: \gps_data_t.fix)!)
                .assumingMemoryBound(to: gps_fix_t.self))
        lineCapacity = 4096
        line = .allocate(capacity: lineCapacity)
    }

    deinit {
        UnsafeMutableRawPointer(gps).deallocate()
        line.deallocate()
    }

    /// Decodes one line of gpsd JSON, with or without its line terminator. Nothing carries over
    /// from earlier lines: libgps resets every field of a class it parses to "not reported".
    public func decode(_ line: String) throws(GPSDecodeError) -> GPSMessage {
        var text = line
        let result = text.withUTF8 { bytes in
            Result { () throws(GPSDecodeError) -> GPSMessage in try decode(utf8: bytes) }
        }
        return try result.get()
    }

    public func decode(_ line: Substring) throws(GPSDecodeError) -> GPSMessage {
        var text = line
        let result = text.withUTF8 { bytes in
            Result { () throws(GPSDecodeError) -> GPSMessage in try decode(utf8: bytes) }
        }
        return try result.get()
    }

    /// Decodes one line given as UTF-8 bytes, with or without its line terminator.
    public func decode(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(GPSDecodeError) -> GPSMessage {
        var start = 0
        var end = bytes.count
        while start < end, Self.isSpace(bytes[start]) { start += 1 }
        guard start < end, bytes[start] == UInt8(ascii: "{") else { throw .notJSON }
        while Self.isSpace(bytes[end - 1]) { end -= 1 }
        let object = UnsafeBufferPointer(rebasing: bytes[start..<end])

        // libgps stops quietly at the end of the buffer and returns 0, so a truncated line
        // would decode as a fix with fields missing; check the framing first.
        if let problem = Self.framingProblem(object) { throw .malformed(problem) }
        let className = Self.className(object)

        copyToLineBuffer(object)
        gps.pointee.set = 0  // libgps ORs non-TPV classes into `set`; check only this line's bits
        var parsedTo: UnsafePointer<CChar>? = nil
        let status = libgps_json_unpack(self.line, gps, &parsedTo)

        guard let className else {
            throw .malformed("no \"class\" key libgps can read (libgps_json_unpack returned \(status))")
        }
        if status == 0 { return try message(className: className) }
        if status == -1 { return .other(className: className) }  // a class libgps does not know
        // Only the classes Pacer reads need libgps' approval. gpsd 3.22 itself sends
        // {"class":"DEVICE",…,"activated":0} when a device closes, and its libgps rejects that
        // (code 20); the framing check above has already caught truncation.
        guard Self.readClasses.contains(className) else { return .other(className: className) }
        let reason = status > 0 ? String(cString: json_error_string(status)) : "unknown error"
        throw .malformed("libgps rejected the \(className) object: \(reason) (code \(status))")
    }

    private static let readClasses: Set<String> = ["TPV", "SKY", "VERSION", "ERROR"]

    private func message(className: String) throws(GPSDecodeError) -> GPSMessage {
        let set = gps.pointee.set
        let union = set & pacer_union_set()
        switch className {
        case "TPV":
            guard set & STATUS_SET != 0 else { throw mismatch(className, set) }
            return .fix(GPSFix(libgps: fix))
        case "SKY":
            guard set & (SATELLITE_SET | DOP_SET) != 0 else { throw mismatch(className, set) }
            return .sky(
                SkyReport(
                    time: Timestamp(libgps: gps.pointee.skyview_time),
                    hdop: gps.pointee.dop.hdop.finite,
                    pdop: gps.pointee.dop.pdop.finite,
                    satellitesUsed: Int(gps.pointee.satellites_used),
                    satellitesSeen: Int(gps.pointee.satellites_visible)))
        case "VERSION":
            // `version` and `error` share a union; only read the member libgps says it filled.
            guard union == VERSION_SET else { throw mismatch(className, set) }
            return .version(release: Self.string(gps.pointee.version.release))
        case "ERROR":
            guard union == ERROR_SET else { throw mismatch(className, set) }
            return .gpsdError(message: Self.string(gps.pointee.error))
        default:
            return .other(className: className)
        }
    }

    private func mismatch(_ className: String, _ set: gps_mask_t) -> GPSDecodeError {
        let mask = String(set, radix: 16)
        return .malformed("libgps set mask 0x\(mask) does not match class \(className)")
    }

    private func copyToLineBuffer(_ object: UnsafeBufferPointer<UInt8>) {
        if object.count + 1 > lineCapacity {
            line.deallocate()
            lineCapacity = max(object.count + 1, lineCapacity * 2)
            line = .allocate(capacity: lineCapacity)
        }
        UnsafeMutableRawPointer(line).copyMemory(
            from: object.baseAddress!, byteCount: object.count)
        line[object.count] = 0
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// nil when `object` is one complete JSON object: braces and brackets balanced and properly
    /// nested outside strings, closing exactly at the last byte, no NUL (C would stop there).
    private static func framingProblem(_ object: UnsafeBufferPointer<UInt8>) -> String? {
        // Raw pointer and plain loops: this runs on every line, also in debug builds.
        let p = object.baseAddress!
        let count = object.count
        var stack: UInt64 = 0  // one bit per open level: 1 = '{', 0 = '['
        var depth = 0
        var index = 0
        while index < count {
            let byte = p[index]
            if byte == 0x22 {  // '"': skip the string, honouring backslash escapes
                index += 1
                while index < count, p[index] != 0x22 {
                    if p[index] == 0x5C { index += 1 }  // step onto the escaped byte
                    if index < count, p[index] == 0 { return "NUL byte at offset \(index)" }
                    index += 1
                }
                if index >= count { return "unterminated string (truncated line?)" }
            } else if byte == 0x7B || byte == 0x5B {  // '{' '['
                guard depth < 64 else { return "nested deeper than 64 levels" }
                stack = stack << 1 | (byte == 0x7B ? 1 : 0)
                depth += 1
            } else if byte == 0x7D || byte == 0x5D {  // '}' ']'
                guard depth > 0, stack & 1 == (byte == 0x7D ? 1 : 0) else {
                    return "unbalanced '\(Character(Unicode.Scalar(byte)))' at offset \(index)"
                }
                stack >>= 1
                depth -= 1
                if depth == 0 && index != count - 1 {
                    return "data after the object at offset \(index + 1)"
                }
            } else if byte == 0 {
                return "NUL byte at offset \(index)"
            }
            index += 1
        }
        return depth == 0 ? nil : "incomplete object (truncated line?)"
    }

    /// The value of the first `"class":"…"`, found the way libgps finds it (first `"class":`,
    /// value quoted right after the colon), so both agree on what the line is.
    private static func className(_ object: UnsafeBufferPointer<UInt8>) -> String? {
        let p = object.baseAddress!
        let count = object.count
        let keyLength = 8  // "class":
        var i = 0
        while i + keyLength < count {
            if p[i] == 0x22, p[i + 1] == 0x63, p[i + 2] == 0x6C, p[i + 3] == 0x61, p[i + 4] == 0x73,
                p[i + 5] == 0x73, p[i + 6] == 0x22, p[i + 7] == 0x3A
            {
                // `"class":` found; libgps then expects the quoted name at once.
                guard p[i + keyLength] == 0x22 else { return nil }
                let nameStart = i + keyLength + 1
                var nameEnd = nameStart
                while nameEnd < count, p[nameEnd] != 0x22 { nameEnd += 1 }
                guard nameEnd < count, nameEnd > nameStart else { return nil }
                return String(
                    decoding: UnsafeBufferPointer(start: p + nameStart, count: nameEnd - nameStart),
                    as: UTF8.self)
            }
            i += 1
        }
        return nil
    }

    /// A fixed-size C char array (imported as a tuple) as a String, up to its first NUL.
    private static func string<T>(_ chars: T) -> String {
        withUnsafeBytes(of: chars) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

@available(*, unavailable)
extension GPSDecoder: Sendable {}
