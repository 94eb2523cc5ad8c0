/// The words of alert messages: the SMS (one message, GSM-7 basic set only) and the spoken
/// confirmation.
public enum AlertText {
    /// The map link's default: OpenStreetMap, short, opens in any phone's browser.
    public static let defaultMapLink = "https://osm.org/?mlat={lat}&mlon={lon}"

    /// One SMS of at most 160 GSM-7 characters. What matters most comes first and stays: what
    /// happened, the time, the map link; the position's accuracy and age, the run, the device
    /// and the battery are dropped, in that order from the end, when it would not fit.
    public static func sms(_ content: AlertContent, mapLink: String = defaultMapLink) -> String {
        let head = headline(content)
        let clock = " " + utcClock(content.time) + "."
        var link = ""
        var quality = ""
        if let lat = content.latitude, let lon = content.longitude,
           let latText = FixedDecimal.format(lat, decimals: 5), let lonText = FixedDecimal.format(lon, decimals: 5) {
            link = " " + mapLink.replacing("{lat}", with: latText).replacing("{lon}", with: lonText)
            var parts: [String] = []
            if let accuracy = content.accuracyMeters, accuracy.isFinite, accuracy >= 0 { parts.append("\(Int(min(accuracy, 99_999).rounded())) m") }
            if let age = content.positionAgeSeconds, age.isFinite { parts.append(ageText(age) + " old") }
            if !parts.isEmpty { quality = " (" + parts.joined(separator: ", ") + ")" }
        } else if content.message == .alert || content.message == .followUp {
            link = " Position unknown (no GPS fix)."
        }
        let device = " Dev " + GSM7.sanitized(content.device, limit: 20)
        let run = content.runID.map { " run \($0)" } ?? ""
        let battery = content.batteryPercent.map { " batt \($0)%" } ?? ""

        // Longest first; the first that fits is sent. The head and clock always fit (< 100).
        let candidates = [
            head + clock + link + quality + device + run + battery,
            head + clock + link + quality + device + run,
            head + clock + link + quality + device,
            head + clock + link + quality,
            head + clock + link,
            head + clock,
        ]
        let text = candidates.first { GSM7.fitsOneMessage($0) } ?? String(candidates.last!.prefix(GSM7.maximumSeptets))
        // Anything unexpected (a map link template with non-GSM-7 characters) is made safe.
        return GSM7.isBasic(text) ? text : GSM7.sanitized(text, limit: GSM7.maximumSeptets)
    }

    /// "SOS: HIGH heart rate 215 bpm, rising." and its kin. A follow-up says how old its heart
    /// rate is: "215 bpm at 07:38:20", or "no heart rate since 07:38" when there is none recent.
    static func headline(_ content: AlertContent) -> String {
        var bpm = content.heartRate.map { " \($0) bpm" } ?? ""
        if content.message == .followUp, let measured = content.heartRateTime {
            let clock = Array(measured.iso8601)
            let hhmmss = clock.count >= 19 ? String(clock[11...18]) : measured.iso8601
            bpm = content.heartRate == nil ? ", no heart rate since " + hhmmss.prefix(5) : bpm + " at " + hhmmss
        }
        let trend = content.trend.map { ", \($0.rawValue)" } ?? ""
        switch content.message {
        case .alert, .followUp:
            let prefix = content.message == .alert ? "SOS" : content.deviceRestarted ? "SOS update, device restarted" : "SOS update"
            switch content.kind {
            case .hrHigh: return "\(prefix): HIGH heart rate\(bpm)\(trend)" + (content.threshold.map { " (limit \($0))" } ?? "")
            case .hrLow: return "\(prefix): LOW heart rate\(bpm)\(trend)" + (content.threshold.map { " (limit \($0))" } ?? "")
            case .hrSignalLost:
                return "\(prefix): heart-rate signal LOST after a steep change" + (content.message == .followUp ? heartAside(bpm) : bpm.isEmpty ? "" : ", last\(bpm)")
            case .noSignalNoMotion:
                return "\(prefix): no heart-rate signal and no movement" + (content.message == .followUp && content.heartRateTime != nil ? heartAside(bpm) : "")
            case .manual: return "\(prefix): the runner asked for help" + (content.message == .followUp ? heartAside(bpm) : "")
            case .test: return "TEST only, please ignore: Pacer SOS check"
            }
        case .resolved:
            return "SOS over: heart rate back in range\(bpm)"
        case .cancelled:
            return "FALSE ALARM, I am OK: SOS cancelled by the runner"
        }
    }

    /// ", heart rate 150 bpm at 07:38:20" or ", no heart rate since 07:38" after a headline.
    private static func heartAside(_ bpm: String) -> String {
        bpm.isEmpty || bpm.hasPrefix(",") ? bpm : ", heart rate\(bpm)"
    }

    /// "07:37:20 UTC 10 May" (the contact may be in another time zone; UTC says so).
    static func utcClock(_ time: Timestamp) -> String {
        let iso = time.iso8601  // 2026-05-10T07:37:20Z or with milliseconds
        let chars = Array(iso)
        guard chars.count >= 19 else { return iso }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let month = Int(String(chars[5...6])).flatMap { (1...12).contains($0) ? months[$0 - 1] : nil } ?? String(chars[5...6])
        let day = Int(String(chars[8...9])).map(String.init) ?? String(chars[8...9])
        return String(chars[11...18]) + " UTC " + day + " " + month
    }

    static func ageText(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded()))
        if s < 120 { return "\(s) s" }
        if s < 7200 { return "\(s / 60) min" }
        return "\(s / 3600) h"
    }

    /// What the runner hears once the alert went out: "Emergency alert sent by text message to 2
    /// contacts and to the server." `channels` are what acknowledged it so far.
    public static func spokenConfirmation(kind: AlertKind, message: AlertContent.Message, channels: [String]) -> String {
        let what: String = switch (message, kind) {
        case (_, .test): "Test alert"
        case (.cancelled, _): "False alarm message"
        case (.resolved, _): "All clear message"
        case (.followUp, _): "Position update"
        default: "Emergency alert"
        }
        guard !channels.isEmpty else { return "\(what) could not be sent yet. Retrying." }
        return "\(what) sent " + list(channels) + "."
    }

    /// The spoken notice when an alert is raised, before anything is sent.
    public static func spokenRaised(_ kind: AlertKind) -> String {
        switch kind {
        case .hrHigh: "Heart rate too high. Calling for help."
        case .hrLow: "Heart rate too low. Calling for help."
        case .hrSignalLost: "Heart rate lost. Calling for help."
        case .noSignalNoMotion: "No heart rate and no movement. Calling for help."
        case .manual: "S O S. Calling for help."
        case .test: "Sending a test alert."
        }
    }

    /// What is said into the alert's voice call (`[sos] call`), again and again: who calls, what
    /// happened, where. Words, not a link: "latitude 45.46427, longitude 9.18951".
    public static func spokenCall(_ content: AlertContent) -> String {
        var text = "This is an automatic emergency call from the Pacer running device \(content.device). "
            + headline(content).replacing("SOS: ", with: "") + ", at " + utcClock(content.time) + "."
        if let lat = content.latitude, let lon = content.longitude,
           let latText = FixedDecimal.format(lat, decimals: 5), let lonText = FixedDecimal.format(lon, decimals: 5) {
            text += " Last position: latitude \(latText), longitude \(lonText)"
            if let age = content.positionAgeSeconds, age.isFinite { text += ", \(ageText(age)) old" }
            text += "."
        } else {
            text += " Position unknown."
        }
        return text + " The details went out by text message. This message repeats."
    }

    /// The spoken notice of a sensor fault (SOS monitoring is blind while it lasts).
    public static func spokenWarning(_ fault: SensorFault) -> String {
        switch fault {
        case .noData: "Emergency monitoring paused: no heart-rate signal."
        case .noContact: "Emergency monitoring paused: the strap has no skin contact."
        case .stale: "Emergency monitoring paused: the strap repeats the same reading."
        case .noStrap: "Emergency monitoring has no heart-rate strap."
        case .insufficient: "Emergency monitoring is unreliable: too few heart-rate readings."
        case .abnormal: "Check your heart-rate strap."
        }
    }

    /// "Are you OK?": asked when the signal and the movement stopped together.
    public static func spokenAsk(timeoutSeconds: Double) -> String {
        "Are you OK? Press the button, or help will be called in \(Int(timeoutSeconds.rounded())) seconds."
    }

    /// The prompt was answered (button, `pacerctl sos cancel`).
    public static let spokenAskAnswered = "OK. No help called."

    private static func list(_ items: [String]) -> String {
        switch items.count {
        case 0: return ""
        case 1: return items[0]
        default: return items.dropLast().joined(separator: ", ") + " and " + items.last!
        }
    }
}
