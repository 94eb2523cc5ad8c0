/// `GET /v1/device/answers`: what monitors answered to the device's alerts, oldest first.
/// The device keeps `last_id` and asks again with `after=last_id`; with `wait=` seconds the
/// server holds the request until an answer comes or the time is up (a long-poll, on a
/// connection of its own, apart from the uploads).
public struct AlertAnswersReply: Codable, Equatable, Sendable {
    public var answers: [AlertAnswerItem]
    /// The newest answer's id, or the `after` asked with when there is none.
    public var last_id: Int64

    public init(answers: [AlertAnswerItem], last_id: Int64) {
        self.answers = answers
        self.last_id = last_id
    }
}

public struct AlertAnswerItem: Codable, Equatable, Sendable {
    /// The kinds: "I am on my way", a short text, and "where are you?" (the device answers it by
    /// sending its position, `PUT /v1/position`; nothing is said).
    public static let onMyWay = "on_my_way"
    public static let text = "text"
    public static let whereAreYou = "where_are_you"

    /// Orders the device's answers; each is spoken once, so the device keeps the last it spoke.
    public var id: Int64
    /// The alert answered; "" for "where are you?" asked while no alert of the device was open.
    public var alert_id: String
    /// The monitor's display name ("Anna").
    public var from: String
    /// "on_my_way", "text" or "where_are_you" (a device skips a kind it does not know).
    public var kind: String
    /// The text for "text": at most `AnswerText.maxCharacters`, cleaned for speech.
    public var text: String?
    /// When the monitor sent it (RFC 3339, UTC).
    public var time: String

    public init(id: Int64, alert_id: String, from: String, kind: String, text: String?, time: String) {
        self.id = id
        self.alert_id = alert_id
        self.from = from
        self.kind = kind
        self.text = text
        self.time = time
    }
}

/// A monitor's short text as a device may speak it.
public enum AnswerText {
    public static let maxCharacters = 100

    /// Printable characters only (controls and formatting characters go), markup removed (no
    /// `<...>` tags, no `<`, `>` or `&` left), runs of whitespace made one space, trimmed.
    public static func cleaned(_ raw: String) -> String {
        var withoutTags = ""
        var inTag = false
        for character in raw {
            if character == "<" { inTag = true; continue }
            if inTag { if character == ">" { inTag = false }; continue }
            withoutTags.append(character)
        }
        var out = ""
        var pendingSpace = false
        for scalar in withoutTags.unicodeScalars {
            let properties = scalar.properties
            if properties.isWhitespace || scalar == "\u{00A0}" {
                pendingSpace = true
                continue
            }
            switch properties.generalCategory {
            case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: continue
            default: break
            }
            if scalar == ">" || scalar == "&" || scalar == "<" { continue }
            if pendingSpace, !out.isEmpty { out.unicodeScalars.append(" ") }
            pendingSpace = false
            out.unicodeScalars.append(scalar)
        }
        return out
    }
}
