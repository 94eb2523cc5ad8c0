import PacerCore
import Testing

@Suite(.timeLimit(.minutes(10))) struct AlertTextTests {
    static let time = Timestamp(iso8601: "2026-05-10T07:37:19Z")!

    static func content(_ message: AlertContent.Message = .alert, kind: AlertKind = .hrHigh, device: String = "pacer-7") -> AlertContent {
        AlertContent(message: message, kind: kind, time: time, firstOutOfRange: time.adding(seconds: -2), heartRate: 215,
                     trend: .rising, threshold: 205, latitude: 45.4779111, longitude: 9.2241432, positionAgeSeconds: 2.4,
                     accuracyMeters: 8.2, device: device, runID: 12, batteryPercent: 54)
    }

    /// Names the robustness tests try: long, accented, other scripts, markup.
    static let wearers: [String?] = [nil, "Zoë Françoise Ørsted-Łukasiewicz", "Анна Петрова", String(repeating: "[{<W>}]", count: 20)]

    @Test func theAlertSaysWhatWhenAndWhere() {
        let text = AlertText.sms(Self.content())
        #expect(text == "SOS: HIGH heart rate 215 bpm, rising (limit 205) at 07:37 UTC (just now). https://osm.org/?mlat=45.47791&mlon=9.22414 (8 m, 2 s old) Dev pacer-7 run 12 batt 54%")
        #expect(GSM7.fitsOneMessage(text))
    }

    @Test func theCallSaysWhoWhatWhenAndWhereInWords() {
        #expect(AlertText.spokenCall(Self.content()) == "This is an automatic emergency call from the Pacer running device pacer-7. "
            + "HIGH heart rate 215 bpm, rising (limit 205), at 07:37 UTC (just now). Last position: latitude 45.47791, longitude 9.22414, "
            + "2 s old. The details went out by text message. This message repeats.")
        var unplaced = Self.content(kind: .manual)
        unplaced.latitude = nil
        unplaced.longitude = nil
        let text = AlertText.spokenCall(unplaced)
        #expect(text.contains("the runner asked for help"))
        #expect(text.contains("Position unknown."))
        #expect(!text.contains("http"))
    }

    @Test func everyMessageIsOneGSM7SMS() {
        let devices = ["pacer-7", "Ünïcødé ☃ wearable with a very long name indeed", "[{}]~^|\\€", String(repeating: "x", count: 300)]
        for message in [AlertContent.Message.alert, .followUp, .resolved, .cancelled] {
            for kind in AlertKind.allCases {
                for (device, wearer) in zip(devices, Self.wearers) {
                    var content = Self.content(message, kind: kind, device: device)
                    content.wearer = wearer
                    content.latitude = -89.999999
                    content.longitude = -179.999999
                    content.accuracyMeters = 123_456
                    content.positionAgeSeconds = 98_765
                    content.runID = Int64.max
                    let text = AlertText.sms(content)
                    #expect(GSM7.isBasic(text), "\(text)")
                    #expect(text.unicodeScalars.count <= 160, "\(text.count): \(text)")
                    #expect(text.contains("osm.org"), "the map link is the last thing to go: \(text)")
                }
            }
        }
    }

    @Test func whatIsDroppedFirstIsTheLeastUseful() {
        var content = Self.content()
        content.device = String(repeating: "d", count: 20)
        content.runID = 123_456_789_012
        let text = AlertText.sms(content)
        #expect(text.contains("https://osm.org"))
        #expect(text.contains("07:37 UTC (just now)"))
        #expect(text.count <= 160)
    }

    @Test func aFollowUpSaysHowOldItsHeartRateIs() {
        var content = Self.content(.followUp)
        content.trend = nil
        content.heartRateTime = Self.time.adding(seconds: -41)
        #expect(AlertText.sms(content).hasPrefix("SOS update: HIGH heart rate 215 bpm at 07:36 UTC (41 s ago) (limit 205) at 07:37 UTC (just now)."), "\(AlertText.sms(content))")
        // Too old to show: only since when there is none.
        content.heartRate = nil
        content.heartRateTime = Self.time.adding(seconds: -200)
        #expect(AlertText.sms(content).hasPrefix("SOS update: HIGH heart rate, no heart rate since 07:33 UTC (3 min ago) (limit 205) at 07:37 UTC"), "\(AlertText.sms(content))")
        content.kind = .manual
        #expect(AlertText.sms(content).hasPrefix("SOS update: the runner asked for help, no heart rate since 07:33 UTC (3 min ago) at 07:37 UTC"), "\(AlertText.sms(content))")
        content.kind = .noSignalNoMotion
        #expect(AlertText.sms(content).hasPrefix("SOS update: no heart-rate signal and no movement, no heart rate since 07:33 UTC (3 min ago) at 07:37"))
        // The alert itself and the last word are as before.
        for message in [AlertContent.Message.alert, .resolved, .cancelled] {
            var other = Self.content(message)
            other.heartRateTime = Self.time.adding(seconds: -200)
            #expect(AlertText.sms(other) == AlertText.sms(Self.content(message)))
        }
    }

    @Test func aFollowUpWithItsHeartRateAgeIsStillOneGSM7SMS() {
        for kind in AlertKind.allCases {
            for bpm in [nil, 255] as [Int?] {
                var content = Self.content(.followUp, kind: kind, device: String(repeating: "x", count: 300))
                content.wearer = String(repeating: "W", count: 64)
                content.deviceRestarted = true
                content.heartRate = bpm
                content.heartRateTime = Self.time.adding(seconds: -3599)
                content.positionAgeSeconds = 98_765
                content.accuracyMeters = 123_456
                content.runID = Int64.max
                let text = AlertText.sms(content)
                #expect(GSM7.isBasic(text), "\(text)")
                #expect(GSM7.fitsOneMessage(text), "\(text.count): \(text)")
                #expect(text.contains("osm.org"), "\(text)")
            }
        }
    }

    @Test func withoutAFixTheMessageSaysSo() {
        var content = Self.content()
        content.latitude = nil
        content.longitude = nil
        #expect(AlertText.sms(content).contains("Position unknown"))
    }

    @Test func cancelSaysFalseAlarm() {
        #expect(AlertText.sms(Self.content(.cancelled)).hasPrefix("FALSE ALARM, I am OK"))
        #expect(AlertText.sms(Self.content(kind: .test)).hasPrefix("TEST only, please ignore"))
    }

    @Test func theGSM7SetExcludesWhatWouldForceUCS2() {
        #expect(GSM7.isBasic("@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ!\"#¤%&'()*+,-./0123456789:;<=>?¡ABCZÄÖÑÜ§¿abczäöñüà"))
        for outside in ["€", "[", "]", "{", "}", "~", "^", "|", "\\", "`", "±", "°", "ç", "’"] {
            #expect(!GSM7.isBasic(outside), "\(outside)")
        }
        #expect(GSM7.sanitized("a€b", limit: 10) == "a?b")
    }

    @Test func spokenConfirmationNamesTheChannels() {
        #expect(AlertText.spokenConfirmation(kind: .hrHigh, message: .alert, channels: ["by text message to 2 contacts", "to the server"])
            == "Emergency alert sent by text message to 2 contacts and to the server.")
        #expect(AlertText.spokenConfirmation(kind: .test, message: .alert, channels: []) == "Test alert could not be sent yet. Retrying.")
    }
}

/// Item 8 of issue #30: every text names the wearer, then the device, and says when in the
/// wearer's zone as "20:45 (3 min ago)".
@Suite(.timeLimit(.minutes(10))) struct AlertTextWearerTests {
    static let rome = try! ZoneOffsetsTests.zone("Europe/Rome")

    static func content(_ message: AlertContent.Message = .alert, kind: AlertKind = .hrHigh) -> AlertContent {
        var content = AlertTextTests.content(message, kind: kind)
        content.wearer = "Anna Rossi"
        content.zone = rome
        return content
    }

    @Test func theTextSaysWhoFirstAndTheTimeInTheWearersZone() {
        let text = AlertText.sms(Self.content())
        #expect(text == "SOS from Anna Rossi: HIGH heart rate 215 bpm, rising (limit 205) at 09:37 (just now). https://osm.org/?mlat=45.47791&mlon=9.22414 (8 m, 2 s old) Dev pacer-7", "\(text)")
        #expect(GSM7.fitsOneMessage(text))
        var followUp = Self.content(.followUp)
        followUp.trend = nil
        followUp.heartRateTime = AlertTextTests.time.adding(seconds: -41)
        #expect(AlertText.sms(followUp).hasPrefix("SOS update from Anna Rossi: HIGH heart rate 215 bpm at 09:36 (41 s ago) (limit 205) at 09:37 (just now)."),
                "\(AlertText.sms(followUp))")
        followUp.deviceRestarted = true
        // The restart note goes before the map link would.
        #expect(AlertText.sms(followUp).hasPrefix("SOS update from Anna Rossi: HIGH heart rate 215 bpm (limit 205) at 09:37 (just now). https://osm.org/"),
                "\(AlertText.sms(followUp))")
        followUp.heartRateTime = nil
        #expect(AlertText.sms(followUp).hasPrefix("SOS update from Anna Rossi, device restarted: HIGH"), "\(AlertText.sms(followUp))")
        #expect(AlertText.sms(Self.content(.resolved)).hasPrefix("SOS over for Anna Rossi: heart rate back in range 215 bpm at 09:37 (just now)."))
        #expect(AlertText.sms(Self.content(.cancelled)).hasPrefix("FALSE ALARM, Anna Rossi is OK: SOS cancelled by the runner at 09:37 (just now)."))
        #expect(AlertText.sms(Self.content(kind: .test)).hasPrefix("TEST only, please ignore: Pacer SOS check from Anna Rossi at 09:37"))
    }

    @Test func theNameIsMadeGSM7AndCutButAlwaysThere() {
        var content = Self.content()
        content.wearer = "  Zoë\u{202E} Françoise\n Łukasiewicz-Ørsted the Third "
        let text = AlertText.sms(content)
        #expect(text.hasPrefix("SOS from Zoe Francoise Lukasi: HIGH heart rate"), "\(text)")
        #expect(GSM7.fitsOneMessage(text))
        // A name no GSM-7 letter can write is left out rather than sent as "????".
        content.wearer = "Анна"
        #expect(AlertText.sms(content).hasPrefix("SOS: HIGH heart rate"))
        content.wearer = "\u{200B}\u{202E} "
        #expect(AlertText.sms(content).hasPrefix("SOS: HIGH heart rate"))
        // Longest name, longest kind, the restart note and an hour-old heart rate: the name and the map link stay.
        for kind in AlertKind.allCases {
            var worst = Self.content(.followUp, kind: kind)
            worst.wearer = String(repeating: "W", count: 64)
            worst.deviceRestarted = true
            worst.heartRate = nil
            worst.heartRateTime = AlertTextTests.time.adding(seconds: -2 * 86_400)
            let sms = AlertText.sms(worst)
            #expect(GSM7.fitsOneMessage(sms), "\(sms.count): \(sms)")
            #expect(sms.contains(String(repeating: "W", count: AlertText.smsWearerLimit)), "\(sms)")
            #expect(sms.contains("osm.org"), "\(sms)")
        }
    }

    @Test func theCallSaysWhoWearsTheDevice() {
        let text = AlertText.spokenCall(Self.content())
        #expect(text.hasPrefix("This is an automatic emergency call from the Pacer running device pacer-7, worn by Anna Rossi. "
            + "HIGH heart rate 215 bpm, rising (limit 205), at 09:37 (just now)."), "\(text)")
    }
}
