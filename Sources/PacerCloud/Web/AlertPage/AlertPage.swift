import CloudModel
import Crypto
import Foundation
import Hummingbird
import PacerContract
import PacerCore

/// The read-only page a relative opens from the SMS or e-mail (`GET /a/{secret}`): who (the
/// wearer, then the device), what happened, where (the last positions on a map, the newest with
/// its age), the newest heart rate and the state, every time as "20:45 (3 min ago)" in the
/// reader's zone (`AlertWords`). Refreshes itself every 10 s so follow-ups appear. Everything
/// from the device is HTML-escaped; names are plain text, never links.
enum AlertPage {
    /// At most this many positions, the newest, go on the map.
    static let mapPositions = 50

    /// The map's data block (`/assets/pacer/alert.js` draws it): positions oldest first as
    /// [lat, lon], each one's time as the page writes it.
    struct MapData: Encodable {
        var positions: [[Double]]
        var times: [String]
    }

    static func html(alert: StoredAlert, messages: [String], answers: [AlertAnswer] = [], nowMs: Int64, words: AlertWords? = nil,
                     readerZone: String? = nil, map: MapSettings? = nil, messageCount: Int? = nil) -> String {
        let decoded = messages.compactMap { try? JSONDecoder().decode(AlertBody.self, from: Data($0.utf8)) }
            .sorted { $0.sequence < $1.sequence }
        let first = decoded.first
        let latestPosition = decoded.last { $0.position != nil }
        let latestHeartRate = decoded.last { $0.heart_rate?.bpm != nil }
        let words = words ?? AlertWords(device: first?.device ?? "the device", account: nil, messages: decoded)
        func when(_ wire: String) -> String { words.time(wire, nowMs: nowMs, zone: readerZone) }

        let state: String
        switch alert.state {
        case .open: state = #"<p class="state open">OPEN: this alert is active</p>"#
        case .cancelled: state = #"<p class="state cancelled">Cancelled: false alarm, the runner said they are OK</p>"#
        case .resolved: state = #"<p class="state resolved">Resolved: the reading is back to normal</p>"#
        }
        var body = ""
        if alert.test { body += #"<p class="test">TEST: this is a test alert, not an emergency.</p>"# + "\n" }
        body += state + "\n"
        body += "<h1>\(escape(heading(alert: alert, words: words)))</h1>\n"
        var script = ""
        if let map, latestPosition != nil {
            let placed = decoded.compactMap { message -> (AlertBody.Position, String)? in
                message.position.map { ($0, when($0.time ?? message.time)) }
            }.suffix(mapPositions)
            let data = MapData(positions: placed.map { [$0.0.lat, $0.0.lon] }, times: placed.map(\.1))
            if let json = try? PageData.script(data) {
                body += "<div id=\"map\" data-tiles=\"\(escape(map.tileURL ?? ""))\" data-attribution=\"\(escape(map.tileAttribution))\"></div>\n"
                script = "<script type=\"application/json\" id=\"alert-data\">\(json)</script>\n"
                    + "<script src=\"/assets/leaflet/leaflet.js\"></script><script src=\"/assets/pacer/alert.js\"></script>\n"
            }
        }
        body += "<dl>\n"
        if let wearer = words.wearer { body += row("Who", wearer) }
        body += row("Device", words.device)
        if let raised = first?.raised_at ?? first?.time { body += row("Raised", when(raised)) }
        if let message = latestPosition, let position = message.position {
            let lat = String(format: "%.6f", position.lat)
            let lon = String(format: "%.6f", position.lon)
            let link = "https://www.openstreetmap.org/?mlat=\(lat)&mlon=\(lon)#map=17/\(lat)/\(lon)"
            var text = "<a href=\"\(escape(link))\" rel=\"noreferrer\">\(lat), \(lon) on OpenStreetMap</a>"
            if let accuracy = position.accuracy_m.flatMap(wholeMetres) { text += " (within \(accuracy) m)" }
            text += ", <span id=\"position-age\">\(escape(when(position.time ?? message.time)))</span>"
            body += "<dt>Last position</dt><dd>\(text)</dd>\n"
        } else {
            body += row("Last position", "not known")
        }
        if let message = latestHeartRate, let heartRate = message.heart_rate, let bpm = heartRate.bpm {
            var text = "\(bpm) bpm"
            if let trend = heartRate.trend { text += ", \(trend)" }
            if let threshold = heartRate.threshold_bpm { text += " (limit \(threshold))" }
            text += ", " + when(message.time)
            body += row("Heart rate", text)
        }
        if let battery = decoded.last(where: { $0.battery_percent != nil })?.battery_percent { body += row("Battery", "\(battery) %") }
        // `messages` may be the first and the newest only (`AlertLimits.pageMessages`): the count is all of them.
        body += row("Messages", "\(messageCount ?? decoded.count), the newest " + (decoded.last.map { when($0.time) } ?? "?"))
        for answer in answers { body += row("Answer", Dashboard.line(answer, nowMs: nowMs)) }
        body += "</dl>\n" + script
        return document(title: heading(alert: alert, words: words), body: body, map: map != nil && !script.isEmpty)
    }

    /// "SOS from Anna Rossi (anna-pacer): high heart rate".
    static func heading(alert: StoredAlert, words: AlertWords) -> String {
        "SOS from \(words.who): \(describe(kind: alert.kind))"
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
        case "hr_signal_lost": "heart-rate signal lost after a steep change"
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

    /// How long ago, as every alert writes it (`AlertClock.age`): "40 s ago", "3 min ago".
    static func age(_ milliseconds: Int64) -> String {
        AlertClock.age(milliseconds: milliseconds)
    }

    /// The page's only style; the CSP allows exactly this text (by its hash).
    static let style = "body{font-family:sans-serif;max-width:40em;margin:1em auto;padding:0 1em;overflow-wrap:anywhere}.state{font-size:1.4em;font-weight:bold}\n"
        + ".open{color:#b00}.cancelled,.resolved{color:#070}.test{background:#ffd;padding:.5em}dt{font-weight:bold;margin-top:.5em}"
        + "h1{font-size:1.5em}#map{height:45vh;min-height:220px;max-height:420px;background:#e8eef0}"

    /// Headers of the not-found and too-many-requests pages: no script at all, no frames, no
    /// sniffing, no referrer, no caching. The pages refresh with a meta refresh, which is not script.
    static let headers = SecurityHeaders.html(style: style, formAction: "'none'")

    /// An alert's page: the same, but scripts from the server only (Leaflet and alert.js; no
    /// inline script: the data is a JSON block), images from the tile server, and the origin as
    /// referrer for it.
    static func pageHeaders(map: MapSettings) -> HTTPFields {
        var fields = SecurityHeaders.html(style: style, formAction: "'none'", scripts: true,
                                          images: ["'self'", "data:"] + (map.tileOrigin.map { [$0] } ?? []))
        fields[.init("Referrer-Policy")!] = PageData.mapReferrer
        return fields
    }

    /// With a map the page loads Leaflet's style sheet and sends the origin (never the path, which
    /// holds the secret) as referrer, as tile servers want; without one it sends none. Its icon is
    /// none (`data:,`): images from the server are allowed there, and there is no favicon to ask for.
    private static func document(title: String, body: String, refresh: Bool = true, map: Bool = false) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        \(refresh ? #"<meta http-equiv="refresh" content="10">"# + "\n" : "")<meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex"><meta name="referrer" content="\(map ? PageData.mapReferrer : "no-referrer")">
        \(map ? #"<link rel="stylesheet" href="/assets/leaflet/leaflet.css"><link rel="icon" href="data:,">"# + "\n" : "")<title>\(escape(title))</title>
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
