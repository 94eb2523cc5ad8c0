import Crypto
import Export
import Foundation

/// A run file uploaded by its runner: which format it is, read into a run.
enum FileImport {
    /// The largest file taken: a 24 h run at 1 Hz is about 2 MB of FIT and 25 MB of TCX.
    static let maxBytes = 32 * 1024 * 1024

    /// The format of `bytes`, from its contents (a FIT header, or the XML's root element), not
    /// from its name.
    static func format(of bytes: [UInt8], fileName: String) throws(ImportError) -> FileFormat {
        if bytes.count >= 12, Array(bytes[8..<12]) == FITProtocol.signature { return .fit }
        // The root element's name, past a BOM, the XML declaration, comments and whitespace.
        let head = String(decoding: bytes.prefix(4096), as: UTF8.self)
        var rest = head[...]
        while let open = rest.firstIndex(of: "<") {
            let after = rest[rest.index(after: open)...]
            if after.hasPrefix("?") || after.hasPrefix("!") {
                guard let close = after.firstIndex(of: ">") else { break }
                rest = after[after.index(after: close)...]
                continue
            }
            let name = after.prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" }
            switch name.split(separator: ":").last.map(String.init) ?? "" {
            case "gpx": return .gpx
            case "TrainingCenterDatabase": return .tcx
            default:
                // Only a printable name is echoed: a binary file's bytes would widen the page.
                let printable = name.prefix(40).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.:".contains($0)) }
                throw ImportError(printable && !name.isEmpty
                    ? "\(fileName): the document is <\(name.prefix(40))>; a GPX file starts with <gpx>, a TCX file with <TrainingCenterDatabase>"
                    : "\(fileName): this is neither a FIT file (no \".FIT\" header) nor a GPX or TCX file (no <gpx> or <TrainingCenterDatabase>)")
            }
        }
        throw ImportError("\(fileName): this is neither a FIT file (no \".FIT\" header) nor a GPX or TCX file (no XML element found)")
    }

    /// The file read into a run ready to store.
    /// The file's activities (a multisport FIT file has one per session), ready to store.
    static func runs(_ bytes: [UInt8], fileName: String) throws(ImportError) -> (format: FileFormat, runs: [ImportedRun]) {
        guard !bytes.isEmpty else { throw ImportError("\(fileName): the file is empty, or none was chosen") }
        let format = try format(of: bytes, fileName: fileName)
        let tracks: [ImportedTrack]
        switch format {
        case .fit: tracks = try FITTrackReader.read(bytes)
        case .gpx, .tcx: tracks = try XMLTrackReader.read(bytes, format: format)
        }
        var runs: [ImportedRun] = []
        for track in tracks { runs.append(try ImportedRun(track)) }
        return (format, runs)
    }

    /// The run id of a file imported into an account: the same file imported twice is the same
    /// run (stored once), and two accounts' ids never meet.
    /// `activity`: its place in the file (a multisport file's sessions); the first keeps the id
    /// files of one activity always had.
    static func runID(accountID: String, bytes: [UInt8], activity: Int = 0) -> String {
        var hash = SHA256()
        hash.update(data: Array("pacer import\0\(accountID)\0".utf8))
        hash.update(data: bytes)
        if activity > 0 { hash.update(data: Array("\0activity \(activity)".utf8)) }
        var id = Array(hash.finalize().prefix(16))
        id[6] = id[6] & 0x0F | 0x50  // version 5 (name-based, SHA)
        id[8] = id[8] & 0x3F | 0x80  // RFC 4122 variant
        let hex = id.map { String(format: "%02x", $0) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }
}
