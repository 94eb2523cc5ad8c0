import FoundationEssentials
import PacerContract
import PacerCore

extension AlertBody {
    /// The message as sent and given to the hook: sorted keys, slashes as they are.
    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings and numbers cannot fail; an empty object is still valid JSON.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The wearer's name in a message's JSON (`wearer`), cleaned for an environment variable
    /// (`WearerName`: one line, no control characters); nil when there is none.
    static func wearer(inJSON json: String) -> String? {
        struct Wearer: Decodable { var wearer: String? }
        return (try? JSONDecoder().decode(Wearer.self, from: Data(json.utf8)))?.wearer.flatMap(WearerName.cleaned)
    }
}
