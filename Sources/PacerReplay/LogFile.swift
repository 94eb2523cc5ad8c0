import FoundationEssentials

/// Reads a whole log file and hands out its lines with their numbers. Logs are at most a few MB
/// (a marathon's gpsd log is 4.4 MB), so reading at once is simplest and fastest.
struct LogFile {
    let path: String
    let bytes: [UInt8]

    init(path: String) throws(ReplayError) {
        self.path = path
        let data: Data
        do {
            data = try Data(contentsOf: URL(filePath: path))
        } catch {
            if !FileManager.default.fileExists(atPath: path) {
                throw ReplayError(.missingFile, "\(path): no such file")
            }
            throw ReplayError(.unreadable, "\(path): cannot read: \(error)")
        }
        guard !data.isEmpty else { throw ReplayError(.emptyFile, "\(path): file is empty") }
        bytes = [UInt8](data)
    }

    /// Calls `body` with each line (without its newline or a trailing CR) and its 1-based number.
    func forEachLine(_ body: (ArraySlice<UInt8>, Int) throws(ReplayError) -> Void) throws(ReplayError) {
        var start = 0
        var number = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 10 { end += 1 }
            number += 1
            var lineEnd = end
            if lineEnd > start, bytes[lineEnd - 1] == 13 { lineEnd -= 1 }
            try body(bytes[start..<lineEnd], number)
            start = end + 1
        }
    }
}
