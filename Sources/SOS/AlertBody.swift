import FoundationEssentials
import PacerContract

extension AlertBody {
    /// The message as sent and given to the hook: sorted keys, slashes as they are.
    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings and numbers cannot fail; an empty object is still valid JSON.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
