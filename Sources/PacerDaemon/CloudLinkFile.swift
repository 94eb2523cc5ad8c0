import Control
import PacerConfig

/// `cloud-link.json` beside the run store (`/var/lib/pacer/cloud-link.json`): the device's link
/// to its account. Mode 0600 (it holds the bearer token), written whole and renamed into place
/// (`StateFile`).
struct CloudLinkFile: Sendable {
    let file: StateFile
    var path: String { file.path }

    init(storePath: String) {
        file = StateFile(besideStore: storePath, named: "cloud-link.json")
    }

    /// nil when there is no file; a file that is not a link is reported, not guessed at.
    func read() throws(StateFileError) -> CloudLink? {
        guard let bytes = try file.read(limit: 65_536) else { return nil }
        guard let value = try? JSONValue(parsing: bytes),
              let url = value["url"]?.stringValue, let token = value["token"]?.stringValue, !token.isEmpty else {
            throw StateFileError("\(path) is not a cloud link (JSON with url and token); link again with pacerctl cloud link URL CODE")
        }
        return CloudLink(url: url, token: token, device: value["device"]?.stringValue ?? "", account: value["account"]?.stringValue ?? "",
                         linkedAt: value["linked_at"]?.stringValue ?? "")
    }

    /// Stores `link`, or removes it when nil.
    func write(_ link: CloudLink?) throws(StateFileError) {
        let json = link.map { link -> JSONValue in
            ["url": .string(link.url), "token": .string(link.token), "device": .string(link.device), "account": .string(link.account),
             "linked_at": .string(link.linkedAt)]
        }
        try file.write(json.map { Array(($0.serialized() + "\n").utf8) }, mode: 0o600)
    }
}
