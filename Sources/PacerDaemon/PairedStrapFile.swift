import BlueZ

/// The strap chosen with `pacerctl strap pair`, one address in a file beside the run store
/// (`/var/lib/pacer/paired-strap`), written whole and renamed into place (`StateFile`).
struct PairedStrapFile: Sendable {
    let file: StateFile
    var path: String { file.path }

    init(storePath: String) {
        file = StateFile(besideStore: storePath, named: "paired-strap")
    }

    /// nil when there is no file; a file that does not hold an address is reported, not guessed at.
    func read() throws(PairedStrapError) -> StrapAddress? {
        let bytes: [UInt8]?
        do { bytes = try file.read(limit: 64) } catch { throw PairedStrapError(message: error.message) }
        let text = String(decoding: bytes ?? [], as: UTF8.self).split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
        if text.isEmpty { return nil }
        guard let address = StrapAddress(text) else { throw PairedStrapError(message: "\(path) holds \"\(text)\", which is not a Bluetooth address; pair the strap again") }
        return address
    }

    /// Stores `address`, or removes the choice when nil.
    func write(_ address: StrapAddress?) throws(PairedStrapError) {
        do { try file.write(address.map { Array(($0.text + "\n").utf8) }, mode: 0o644) } catch { throw PairedStrapError(message: error.message) }
    }
}

struct PairedStrapError: Error, Sendable, CustomStringConvertible {
    let message: String
    var description: String { message }
}
