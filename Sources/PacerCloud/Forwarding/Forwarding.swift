import CloudModel
import Foundation
import PacerContract

/// What is forwarded for a new alert message, made when the message is recorded (so the
/// outbox holds exactly what will be sent, and a restart sends the same).
enum Forwarding {
    /// The webhook's JSON: `{"device", "wearer", "summary", "page", "message"}`, the message
    /// spliced in as received. `device` is the device's name here (as it always was); `wearer`
    /// is left out when no name is known; `summary` is the e-mail's first line, with the time in
    /// the wearer's zone (a webhook's reader is not known).
    static func webhookPayload(device: String, words: AlertWords, page: String, message: AlertBody, messageJSON: String, nowMs: Int64) -> String {
        var head: [String: String] = ["device": device, "page": page, "summary": summary(words: words, message: message, nowMs: nowMs, zone: nil)]
        if let wearer = words.wearer { head["wearer"] = wearer }
        let text = (try? JSONInput.canonical(head)) ?? "{}"
        return String(text.dropLast()) + #","message":"# + messageJSON + "}"
    }

    struct Email: Codable, Equatable {
        var from: String
        var to: String
        var subject: String
        var text: String
    }

    /// The message in a line: "SOS from Anna Rossi (anna-pacer): high heart rate, 20:45 (just now)."
    static func summary(words: AlertWords, message: AlertBody, nowMs: Int64, zone: String?) -> String {
        let what = AlertPage.describe(kind: message.kind)
        let test = message.test ? "TEST " : ""
        let when = words.time(message.time, nowMs: nowMs, zone: zone)
        switch message.type {
        case "cancelled": return "\(test)SOS from \(words.who) cancelled, \(when): FALSE ALARM, the runner says they are OK."
        case "resolved": return "\(test)SOS from \(words.who) (\(what)) resolved, \(when): the reading is back to normal."
        case "follow_up": return "\(test)Update on the SOS from \(words.who): \(what), \(when)."
        default: return "\(test)SOS from \(words.who): \(what), \(when)."
        }
    }

    /// The e-mail: the wearer, then the device, in the subject and the first line; times in
    /// `readerZone` (the recipient's account's, when the recipient has one; nil: the wearer's).
    static func emailPayload(from: String, to: String, words: AlertWords, page: String, message: AlertBody, nowMs: Int64,
                             readerZone: String? = nil) -> String {
        let what = AlertPage.describe(kind: message.kind)
        let test = message.test ? "TEST " : ""
        let subject: String
        switch message.type {
        case "cancelled": subject = "\(test)SOS cancelled for \(words.who): false alarm"
        case "resolved": subject = "\(test)SOS resolved for \(words.who)"
        case "follow_up": subject = "\(test)SOS update from \(words.who): \(what)"
        default: subject = "\(test)SOS from \(words.who): \(what)"
        }
        var lines = [summary(words: words, message: message, nowMs: nowMs, zone: readerZone)]
        if message.test { lines.append("This is a TEST alert, not an emergency.") }
        if let wearer = words.wearer { lines.append("Who: \(wearer), wearing the device \(words.device).") }
        if let bpm = message.heart_rate?.bpm { lines.append("Heart rate: \(bpm) bpm\(message.heart_rate?.trend.map { ", \($0)" } ?? "").") }
        if let position = message.position {
            var line = String(format: "Position: https://www.openstreetmap.org/?mlat=%.6f&mlon=%.6f", position.lat, position.lon)
            if let time = position.time { line += ", " + words.time(time, nowMs: nowMs, zone: readerZone) }
            lines.append(line)
        }
        if let sms = message.sms { lines.append("Device's text: \(sms)") }
        lines.append("")
        lines.append("Live page (updates every 10 s): \(page)")
        return (try? JSONInput.canonical(Email(from: from, to: to, subject: subject, text: lines.joined(separator: "\n")))) ?? "{}"
    }
}
