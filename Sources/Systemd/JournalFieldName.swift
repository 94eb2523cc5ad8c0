/// Journal field names as journald accepts them from a client (sd_journal_print(3),
/// journal-fields(7)): 1–64 characters of `A-Z`, `0-9` and `_`, not starting with a digit or
/// `_` (leading `_` marks fields only journald itself may set). journald silently drops a
/// field whose name breaks these rules, so names are fixed before sending.
enum JournalFieldName {
    static let maximumLength = 64

    /// The valid name closest to `raw`: letters upper-cased, any other character not allowed
    /// becomes `_`, leading digits and underscores go, and the rest is cut to 64 characters.
    /// `run_id` → `RUN_ID`, `code.file` → `CODE_FILE`. nil when nothing is left (`"_"`, `"42"`).
    static func normalized(_ raw: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(raw.utf8.count, maximumLength))
        for byte in raw.utf8 {
            let fixed: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"):
                fixed = byte
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                fixed = byte - 32
            default:
                fixed = UInt8(ascii: "_")
            }
            let isDigit = fixed >= UInt8(ascii: "0") && fixed <= UInt8(ascii: "9")
            if bytes.isEmpty && (isDigit || fixed == UInt8(ascii: "_")) { continue }
            bytes.append(fixed)
            if bytes.count == maximumLength { break }
        }
        // A multi-byte character becomes one `_` per byte; that is still a valid name.
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    static func isValid(_ name: String) -> Bool { normalized(name) == name }
}
