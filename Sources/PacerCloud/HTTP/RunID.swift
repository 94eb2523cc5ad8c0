import Foundation
import PacerContract

/// Run and alert ids are UUIDs; runs take them lowercase (as the device writes them), so one
/// run cannot be stored twice under two spellings.
enum Identifiers {
    static func runID(_ text: String?) throws(APIError) -> String {
        guard let text, UUID(uuidString: text) != nil, text == text.lowercased() else {
            throw .badRequest("invalid_run_id", "run_id \(WireLimits.quoted(text ?? "")) is not a lowercase UUID (e.g. 3f2b8c1e-...-...)")
        }
        return text
    }

    static func alertID(_ text: String) throws(APIError) -> String {
        guard UUID(uuidString: text) != nil else { throw JSONInput.invalid("alert_id", "\(WireLimits.quoted(text)) is not a UUID") }
        return text.lowercased()
    }
}
