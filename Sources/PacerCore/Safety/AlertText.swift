/// The words of alert messages: the SMS (one message, GSM-7 basic set only) and the spoken
/// confirmation.
public enum AlertText {
    /// The map link's default: OpenStreetMap, short, opens in any phone's browser.
    public static let defaultMapLink = "https://osm.org/?mlat={lat}&mlon={lon}"

    /// The wearer's name in an SMS: at most this many GSM-7 characters.
    public static let smsWearerLimit = 20

    /// One SMS of at most 160 GSM-7 characters. What matters most comes first and stays: who
    /// (the wearer's name), what happened, the time, the map link; the position's accuracy and
    /// age, the run, the device and the battery are dropped, in that order from the end, when it
    /// would not fit. The time is the wearer's ("20:37 (just now)", `AlertClock`): the reader's
    /// zone is not known, and the age makes the clock plain in any zone.
    public static func sms(_ content: AlertContent, mapLink: String = defaultMapLink) -> String {
        let wearer = content.wearer.flatMap { WearerName.gsm7($0, limit: smsWearerLimit) }
        let head = headline(content, wearer: wearer)
        // Without the heart rate's age, the restart note and "after a steep change": what is
        // said when the whole headline would push the map link out.
        let brief = headline(content, wearer: wearer, brief: true)
        let clock = " at " + AlertClock.text(content.time, now: content.time, zone: content.zone) + "."
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

        // Longest first; the first that fits is sent. The brief head and clock always fit (< 110).
        let candidates = [
            head + clock + link + quality + device + run + battery,
            head + clock + link + quality + device + run,
            head + clock + link + quality + device,
            head + clock + link + quality,
            head + clock + link,
            brief + clock + link,
            brief + clock,
        ]
        let text = candidates.first { GSM7.fitsOneMessage($0) } ?? String(candidates.last!.prefix(GSM7.maximumSeptets))
        // Anything unexpected (a map link template with non-GSM-7 characters) is made safe.
        return GSM7.isBasic(text) ? text : GSM7.sanitized(text, limit: GSM7.maximumSeptets)
    }

    /// "SOS from Anna: HIGH heart rate 215 bpm, rising." and its kin ("SOS: ..." without a name).
    /// A follow-up says how old its heart rate is: "215 bpm at 20:38 (40 s ago)", or "no heart
    /// rate since 20:33 (5 min ago)" when there is none recent (ages from the message's time).
    /// `brief`: without the heart rate's age, the restart note and "after a steep change".
    static func headline(_ content: AlertContent, wearer: String?, brief: Bool = false) -> String {
        var bpm = content.heartRate.map { " \($0) bpm" } ?? ""
        if !brief, content.message == .followUp, let measured = content.heartRateTime {
            let when = AlertClock.text(measured, now: content.time, zone: content.zone)
            bpm = content.heartRate == nil ? ", no heart rate since " + when : bpm + " at " + when
        }
        let trend = content.trend.map { ", \($0.rawValue)" } ?? ""
        let from = wearer.map { " from " + $0 } ?? ""
        switch content.message {
        case .alert, .followUp:
            let prefix = content.message == .alert ? "SOS" + from
                : content.deviceRestarted && !brief ? "SOS update" + from + ", device restarted" : "SOS update" + from
            switch content.kind {
            case .hrHigh: return "\(prefix): HIGH heart rate\(bpm)\(trend)" + (content.threshold.map { " (limit \($0))" } ?? "")
            case .hrLow: return "\(prefix): LOW heart rate\(bpm)\(trend)" + (content.threshold.map { " (limit \($0))" } ?? "")
            case .hrSignalLost:
                return "\(prefix): heart-rate signal LOST" + (brief ? "" : " after a steep change") + (content.message == .followUp ? heartAside(bpm) : bpm.isEmpty ? "" : ", last\(bpm)")
            case .noSignalNoMotion:
                return "\(prefix): no heart-rate signal and no movement" + (content.message == .followUp && content.heartRateTime != nil && !brief ? heartAside(bpm) : "")
            case .manual: return "\(prefix): the runner asked for help" + (content.message == .followUp ? heartAside(bpm) : "")
            case .test: return "TEST only, please ignore: Pacer SOS check" + from
            }
        case .resolved:
            return "SOS over" + (wearer.map { " for " + $0 } ?? "") + ": heart rate back in range\(bpm)"
        case .cancelled:
            return wearer.map { "FALSE ALARM, \($0) is OK: SOS cancelled by the runner" } ?? "FALSE ALARM, I am OK: SOS cancelled by the runner"
        }
    }

    /// ", heart rate 150 bpm at 20:38 (40 s ago)" or ", no heart rate since 20:33 (5 min ago)" after a headline.
    private static func heartAside(_ bpm: String) -> String {
        bpm.isEmpty || bpm.hasPrefix(",") ? bpm : ", heart rate\(bpm)"
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

    /// What is said into the alert's voice call (`[sos] call`), again and again: who calls, for
    /// whom, what happened, when, where. Words, not a link: "latitude 45.46427, longitude 9.18951".
    public static func spokenCall(_ content: AlertContent) -> String {
        let wearer = content.wearer.flatMap(WearerName.cleaned).map { ", worn by \($0)" } ?? ""
        var text = "This is an automatic emergency call from the Pacer running device \(content.device)\(wearer). "
            + headline(content, wearer: nil).replacing("SOS: ", with: "") + ", at " + AlertClock.text(content.time, now: content.time, zone: content.zone) + "."
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
