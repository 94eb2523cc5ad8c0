import Foundation
import PacerContract

/// What is forwarded for a new alert message, made when the message is recorded (so the
/// outbox holds exactly what will be sent, and a restart sends the same).
enum Forwarding {
    /// The webhook's JSON: `{"device", "page", "message"}`, the message spliced in as received.
    static func webhookPayload(device: String, page: String, messageJSON: String) -> String {
        let head = (try? JSONInput.canonical(["device": device, "page": page])) ?? "{}"
        return String(head.dropLast()) + #","message":"# + messageJSON + "}"
    }

    struct Email: Codable, Equatable {
        var from: String
        var to: String
        var subject: String
        var text: String
    }

    static func emailPayload(from: String, to: String, device: String, page: String, message: AlertBody) -> String {
        let what = AlertPage.describe(kind: message.kind)
        let test = message.test ? "TEST " : ""
        let subject: String
        var lines: [String] = []
        switch message.type {
        case "cancelled":
            subject = "\(test)SOS cancelled (\(device)): false alarm"
            lines.append("The SOS from \(device) was cancelled: FALSE ALARM, the runner says they are OK.")
        case "resolved":
            subject = "\(test)SOS resolved (\(device))"
            lines.append("The SOS from \(device) (\(what)) is resolved: the reading is back to normal.")
        case "follow_up":
            subject = "\(test)SOS update (\(device)): \(what)"
            lines.append("Update on the SOS from \(device): \(what).")
        default:
            subject = "\(test)SOS (\(device)): \(what)"
            lines.append("SOS from \(device): \(what).")
        }
        if message.test { lines.append("This is a TEST alert, not an emergency.") }
        if let bpm = message.heart_rate?.bpm { lines.append("Heart rate: \(bpm) bpm\(message.heart_rate?.trend.map { ", \($0)" } ?? "").") }
        if let position = message.position {
            lines.append(String(format: "Position: https://www.openstreetmap.org/?mlat=%.6f&mlon=%.6f", position.lat, position.lon))
        }
        lines.append("Time: \(message.time)")
        if let sms = message.sms { lines.append("Device's text: \(sms)") }
        lines.append("")
        lines.append("Live page (updates every 10 s): \(page)")
        return (try? JSONInput.canonical(Email(from: from, to: to, subject: subject, text: lines.joined(separator: "\n")))) ?? "{}"
    }
}
