import Crypto
import Foundation
import Hummingbird
import PacerContract

/// The read-only page a relative opens from the SMS or e-mail (`GET /a/{secret}`): what
/// happened, where (the newest position any message carried, with its age), the newest heart
/// rate and the state. Refreshes itself every 10 s so follow-ups appear. Everything from the
/// device is HTML-escaped.
enum AlertPage {
    static func html(alert: StoredAlert, messages: [String], answers: [AlertAnswer] = [], nowMs: Int64) -> String {
        let decoded = messages.compactMap { try? JSONDecoder().decode(AlertBody.self, from: Data($0.utf8)) }
            .sorted { $0.sequence < $1.sequence }
        let first = decoded.first
        let latestPosition = decoded.last { $0.position != nil }
        let latestHeartRate = decoded.last { $0.heart_rate?.bpm != nil }

        let state: String
        switch alert.state {
        case .open: state = #"<p class="state open">OPEN: this alert is active</p>"#
        case .cancelled: state = #"<p class="state cancelled">Cancelled: false alarm, the runner said they are OK</p>"#
        case .resolved: state = #"<p class="state resolved">Resolved: the reading is back to normal</p>"#
        }
        var body = ""
        if alert.test { body += #"<p class="test">TEST: this is a test alert, not an emergency.</p>"# + "\n" }
        body += state + "\n"
        body += "<h1>SOS: \(escape(describe(kind: alert.kind)))</h1>\n<dl>\n"
        if let raised = first?.raised_at ?? first?.time { body += row("Raised", raised) }
        if let device = first?.device { body += row("Device", device) }
        if let message = latestPosition, let position = message.position {
            let lat = String(format: "%.6f", position.lat)
            let lon = String(format: "%.6f", position.lon)
            let link = "https://www.openstreetmap.org/?mlat=\(lat)&mlon=\(lon)#map=17/\(lat)/\(lon)"
            var text = "<a href=\"\(escape(link))\">\(lat), \(lon) on OpenStreetMap</a>"
            if let accuracy = position.accuracy_m.flatMap(wholeMetres) { text += " (within \(accuracy) m)" }
            let time = position.time ?? message.time
            if let ms = AlertBody.placedTime(time) {
                text += ", \(escape(age(nowMs - ms))) (\(escape(time)))"
            } else {
                text += ", at the device's time \(escape(time))"
            }
            body += "<dt>Last position</dt><dd>\(text)</dd>\n"
        } else {
            body += row("Last position", "not known")
        }
        if let message = latestHeartRate, let heartRate = message.heart_rate, let bpm = heartRate.bpm {
            var text = "\(bpm) bpm"
            if let trend = heartRate.trend { text += ", \(trend)" }
            if let threshold = heartRate.threshold_bpm { text += " (limit \(threshold))" }
            text += " at \(message.time)"
            body += row("Heart rate", text)
        }
        if let battery = decoded.last(where: { $0.battery_percent != nil })?.battery_percent { body += row("Battery", "\(battery) %") }
        body += row("Messages", "\(decoded.count), the newest at \(decoded.last?.time ?? "?")")
        for answer in answers { body += row("Answer", Dashboard.line(answer, nowMs: nowMs)) }
        body += "</dl>\n"
        return document(title: "SOS: \(describe(kind: alert.kind))", body: body)
    }

    static func notFound() -> String {
        document(title: "No such alert", body: "<h1>No such alert</h1>\n<p>This link is not (or no longer) an alert's page.</p>\n",
                 refresh: false)
    }

    static func tooManyRequests(retryAfter seconds: Int) -> String {
        document(title: "Too many requests",
                 body: "<h1>Too many requests</h1>\n<p>Too many pages were asked for from this address. Try again in \(seconds) s.</p>\n",
                 refresh: false)
    }

    private static func row(_ label: String, _ value: String) -> String {
        "<dt>\(escape(label))</dt><dd>\(escape(value))</dd>\n"
    }

    static func describe(kind: String) -> String {
        switch kind {
        case "hr_high": "high heart rate"
        case "hr_low": "low heart rate"
        case "no_signal_no_motion": "no heart-rate signal and no movement"
        case "manual": "the runner asked for help"
        default: kind
        }
    }

    /// Whole metres, for an accuracy the edge took (0...100 km); nil for anything a stored
    /// message from an older server may hold that cannot be an Int (1e300, NaN).
    static func wholeMetres(_ value: Double) -> Int? {
        guard value.isFinite, WireLimits.accuracyM.contains(value) else { return nil }
        return Int(value.rounded())
    }

    static func age(_ milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds / 1000)
        if seconds < 90 { return "\(seconds) s ago" }
        if seconds < 90 * 60 { return "\(seconds / 60) min ago" }
        // Past two days the minutes say nothing (a position from a replayed or stale fix).
        if seconds >= 48 * 3600 { return "\(seconds / 86_400) days ago" }
        return "\(seconds / 3600) h \(seconds / 60 % 60) min ago"
    }

    /// The page's only style; the CSP allows exactly this text (by its hash), and no script at all.
    static let style = "body{font-family:sans-serif;max-width:40em;margin:1em auto;padding:0 1em;overflow-wrap:anywhere}.state{font-size:1.4em;font-weight:bold}\n"
        + ".open{color:#b00}.cancelled,.resolved{color:#070}.test{background:#ffd;padding:.5em}dt{font-weight:bold;margin-top:.5em}"

    /// Headers for every HTML answer: no script, no frames, no sniffing, no referrer, no caching.
    /// The page refreshes itself with a meta refresh, which is not script.
    static let headers = SecurityHeaders.html(style: style, formAction: "'none'")

    private static func document(title: String, body: String, refresh: Bool = true) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        \(refresh ? #"<meta http-equiv="refresh" content="10">"# + "\n" : "")<meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex"><meta name="referrer" content="no-referrer">
        <title>\(escape(title))</title>
        <style>\(style)</style>
        </head><body>
        \(body)</body></html>

        """
    }

    /// HTML-escapes text for element content and quoted attributes.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
