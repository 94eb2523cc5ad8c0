import PacerCore
import Testing
@testable import PacerConfig

@Suite(.timeLimit(.minutes(10))) struct SOSConfigTests {
    static let file = "/etc/pacer/pacer.toml"

    static func parse(_ text: String) throws(ConfigError) -> PacerConfiguration {
        try PacerConfiguration.parse(text, file: file)
    }

    // MARK: Defaults

    @Test func defaultsAtThirtyFive() throws {
        let config = try Self.parse("")
        #expect(config.age == 35)
        #expect(config.sos.enabledSetting == nil)
        #expect(config.sos.rules.enabled == false)
        // Tanaka at 35: 208 − 24.5 = 183.5, rounded 184; plus 15.
        #expect(config.maxHeartRate == 184)
        #expect(config.sos.rules.highBpm == 199)
        #expect(config.sos.rules.lowBpm == 35)
        #expect(config.sos.rules.confirmWindowSeconds == 4)
        #expect(config.sos.rules.confirmSamples == 3)
        #expect(config.sos.contacts.isEmpty)
        #expect(config.sos.hook.isEmpty)
        #expect(config.sos.call == nil)
        #expect(config.sos.callAudioDevice == nil)
        #expect(config.sos.sms && config.sos.https)
        #expect(config.sos.mapLink == "https://osm.org/?mlat={lat}&mlon={lon}")
        #expect(config.sos.deviceName == nil)
        #expect(config.sos.attemptTimeoutSeconds == 30)
        #expect(config.sos.retryMaxSeconds == 60)
        #expect(config.upload.url == nil)
        #expect(config.upload.token == nil)
        #expect(config.upload.caFile == nil)
        // An empty file and no file agree.
        #expect(PacerConfiguration().sos == config.sos)
    }

    @Test(arguments: [(59, false), (60, true), (61, true), (75, true), (10, false)])
    func onByDefaultFromSixty(age: Int, enabled: Bool) throws {
        let config = try Self.parse("[profile]\nage = \(age)\n")
        #expect(config.sos.rules.enabled == enabled)
        #expect(config.sos.enabledSetting == nil)
        #expect(config.sos.rules.highBpm == Int((208 - 0.7 * Double(age)).rounded()) + 15)
    }

    @Test func anExplicitSettingWinsOverTheAge() throws {
        let off = try Self.parse("[profile]\nage = 70\n[sos]\nenabled = false\n")
        #expect(off.sos.rules.enabled == false)
        #expect(off.sos.enabledSetting == false)
        let on = try Self.parse("[profile]\nage = 30\n[sos]\nenabled = true\n")
        #expect(on.sos.rules.enabled == true)
        // The age may come after [sos]: the default is settled once the whole file is read.
        let later = try Self.parse("[sos]\nhr_low_bpm = 40\n[profile]\nage = 64\n")
        #expect(later.sos.rules.enabled == true)
        #expect(later.sos.rules.highBpm == 208 - 45 + 15)  // 208 − 44.8 = 163.2 → 163
    }

    @Test func theHighLimitFollowsTheMaximumHeartRateUnlessSet() throws {
        #expect(try Self.parse("[profile]\nmax_hr_bpm = 190\n").sos.rules.highBpm == 205)
        // max_hr_bpm = 0 means "from the age".
        #expect(try Self.parse("[profile]\nmax_hr_bpm = 0\nage = 50\n").sos.rules.highBpm == 173 + 15)
        let explicit = try Self.parse("[profile]\nmax_hr_bpm = 190\n[sos]\nhr_high_bpm = 170\n")
        #expect(explicit.sos.rules.highBpm == 170)
        #expect(explicit.sos.highBpmSetting == 170)
    }

    // MARK: Every key

    @Test func everyKeyIsRead() throws {
        let config = try Self.parse("""
            [sos]
            enabled = true
            hr_high_bpm = 190
            hr_low_bpm = 40
            confirm_window_s = 4.5
            confirm_samples = 4
            rearm_s = 45
            sensor_fault_s = 8
            stale_s = 8
            no_signal_no_motion_s = 75
            collapse_window_s = 20
            collapse_ask_s = 15
            collapse_evidence_share = 0.4
            follow_up_every_s = 120
            follow_up_for_min = 20
            contacts = ["+393471234567", "+14155550123"]
            sms = false
            https = false
            call = "+14155550199"
            call_audio_device = "plughw:2,0"
            hook = ["/usr/local/bin/notify", "--urgent"]
            map_link = "https://maps.example.org/?q={lat},{lon}"
            device_name = "Anna's watch"
            attempt_timeout_s = 12.5
            retry_max_s = 300

            [upload]
            url = "https://pacer.example.org"
            token = "s3cret"
            ca_file = "/etc/pacer/cloud-ca.pem"
            """)
        let sos = config.sos
        #expect(sos.enabledSetting == true)
        #expect(sos.rules.enabled == true)
        #expect(sos.highBpmSetting == 190)
        #expect(sos.rules.highBpm == 190)
        #expect(sos.rules.lowBpm == 40)
        #expect(sos.rules.confirmWindowSeconds == 4.5)
        #expect(sos.rules.confirmSamples == 4)
        #expect(sos.rules.rearmSeconds == 45)
        #expect(sos.rules.faultAfterSeconds == 8)
        #expect(sos.rules.staleAfterSeconds == 8)
        #expect(sos.rules.noSignalNoMotionSeconds == 75)
        #expect(sos.rules.collapseWindowSeconds == 20)
        #expect(sos.rules.collapseAskSeconds == 15)
        #expect(sos.rules.evidenceShare == 0.4)
        #expect(sos.rules.followUpEverySeconds == 120)
        #expect(sos.rules.followUpForSeconds == 1200)
        #expect(sos.contacts == ["+393471234567", "+14155550123"])
        #expect(sos.sms == false)
        #expect(sos.https == false)
        #expect(sos.call == "+14155550199")
        #expect(sos.callAudioDevice == "plughw:2,0")
        #expect(sos.hook == ["/usr/local/bin/notify", "--urgent"])
        #expect(sos.mapLink == "https://maps.example.org/?q={lat},{lon}")
        #expect(sos.deviceName == "Anna's watch")
        #expect(sos.attemptTimeoutSeconds == 12.5)
        #expect(sos.retryMaxSeconds == 300)
        #expect(config.upload.url == "https://pacer.example.org")
        #expect(config.upload.token == "s3cret")
        #expect(config.upload.caFile == "/etc/pacer/cloud-ca.pem")
    }

    @Test(arguments: ["112", "911", "999", "000", "+393471234567"])
    func theCallTakesAnInternationalOrAnEmergencyShortNumber(number: String) throws {
        #expect(try Self.parse("[sos]\ncall = \"\(number)\"\n").sos.call == number)
    }

    @Test func emptyValuesMeanNone() throws {
        let config = try Self.parse("""
            [sos]
            contacts = []
            call = ""
            call_audio_device = ""
            hook = []
            device_name = ""
            follow_up_every_s = 0
            [upload]
            url = ""
            token = ""
            """)
        #expect(config.sos.contacts.isEmpty)
        #expect(config.sos.hook.isEmpty)
        #expect(config.sos.call == nil)
        #expect(config.sos.callAudioDevice == nil)
        #expect(config.sos.deviceName == nil)
        #expect(config.sos.rules.followUpEverySeconds == 0)
        #expect(config.upload.url == nil)
        #expect(config.upload.token == nil)
    }

    @Test(arguments: [
        ("https://pacer.example.org/", "https://pacer.example.org"),
        ("https://pacer.example.org///", "https://pacer.example.org"),
        ("https://pacer.example.org/api/", "https://pacer.example.org/api"),
        ("https://10.0.0.2:8443", "https://10.0.0.2:8443"),
    ])
    func theUploadURLLosesItsTrailingSlashes(written: String, kept: String) throws {
        #expect(try Self.parse("[upload]\nurl = \"\(written)\"\n").upload.url == kept)
    }

    // MARK: Errors

    struct BadCase: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var key: String
        var problem: String
        var testDescription: String { "\(key): \(problem)" }
    }

    @Test(arguments: [
        BadCase(text: "[sos]\ncontacts = [\"12345\"]\n", line: 2, key: "sos.contacts", problem: "international format"),
        BadCase(text: "[sos]\ncontacts = [\"+39 347 1234567\"]\n", line: 2, key: "sos.contacts", problem: "got \"+39 347 1234567\""),
        BadCase(text: "[sos]\ncontacts = [\"+12345\"]\n", line: 2, key: "sos.contacts", problem: "6 to 15 digits"),
        BadCase(text: "[sos]\ncontacts = [\"+3934712345678901\"]\n", line: 2, key: "sos.contacts", problem: "international format"),
        BadCase(text: "[sos]\ncontacts = \"+393471234567\"\n", line: 2, key: "sos.contacts", problem: "got a string"),
        BadCase(text: "[sos]\ncontacts = [393471234567]\n", line: 2, key: "sos.contacts", problem: "is not a string"),
        BadCase(text: "[sos]\n\ncontacts = [\"+393471234567\", \"+393471234567\"]\n", line: 3, key: "sos.contacts", problem: "listed twice"),
        BadCase(text: "[sos]\ncall = \"12345\"\n", line: 2, key: "sos.call", problem: "international format"),
        BadCase(text: "[sos]\ncall = \"113\"\n", line: 2, key: "sos.call", problem: "or one of 000, 112, 911, 999, got \"113\""),
        BadCase(text: "[sos]\ncall = \"+39 347 1234567\"\n", line: 2, key: "sos.call", problem: "no spaces"),
        BadCase(text: "[sos]\ncall = [\"+393471234567\"]\n", line: 2, key: "sos.call", problem: "got an array"),
        BadCase(text: "[sos]\ncall_audio_device = 2\n", line: 2, key: "sos.call_audio_device", problem: "ALSA device name"),
        BadCase(text: "[sos]\nconfirm_window_s = 5\n", line: 2, key: "sos.confirm_window_s", problem: "5 s deadline"),
        BadCase(text: "[sos]\nconfirm_window_s = 5\n", line: 2, key: "sos.confirm_window_s", problem: "from 1 to 4.5"),
        BadCase(text: "[sos]\nconfirm_window_s = 0.5\n", line: 2, key: "sos.confirm_window_s", problem: "got 0.5"),
        BadCase(text: "[sos]\nconfirm_samples = 1\n", line: 2, key: "sos.confirm_samples", problem: "1 would let one artefact raise an alert"),
        BadCase(text: "[sos]\nconfirm_samples = 2.5\n", line: 2, key: "sos.confirm_samples", problem: "got 2.5"),
        BadCase(text: "[sos]\nhook = [\"relative/path\"]\n", line: 2, key: "sos.hook", problem: "absolute path first, got \"relative/path\""),
        BadCase(text: "[sos]\nhook = \"/usr/local/bin/notify\"\n", line: 2, key: "sos.hook", problem: "array of strings"),
        BadCase(text: "[sos]\nmap_link = \"https://osm.org/?mlon={lon}\"\n", line: 2, key: "sos.map_link", problem: "{lat} and {lon}"),
        BadCase(text: "[sos]\nmap_link = \"https://osm.org/?mlat={lat}\"\n", line: 2, key: "sos.map_link", problem: "{lat} and {lon}"),
        BadCase(text: "[sos]\nmap_link = \"https://a-very-long-map-service.example.org/show?lat={lat}&lon={lon}\"\n", line: 2,
                key: "sos.map_link", problem: "at most 60 plain characters"),
        BadCase(text: "[sos]\nmap_link = \"\"\n", line: 2, key: "sos.map_link", problem: "empty string"),
        BadCase(text: "[upload]\nurl = \"ftp://x\"\n", line: 2, key: "upload.url", problem: "starting with https://"),
        BadCase(text: "[upload]\nurl = \"pacer.example.org\"\n", line: 2, key: "upload.url", problem: "got \"pacer.example.org\""),
        BadCase(text: "[upload]\nca_file = \"ca.pem\"\n", line: 2, key: "upload.ca_file", problem: "absolute path"),
        BadCase(text: "[upload]\ntoken = 12\n", line: 2, key: "upload.token", problem: "got a number"),
        BadCase(text: "[sos]\nenabled = \"yes\"\n", line: 2, key: "sos.enabled", problem: "true or false"),
        BadCase(text: "[sos]\nsms = 1\n", line: 2, key: "sos.sms", problem: "true or false"),
        BadCase(text: "[sos]\nhttps = \"no\"\n", line: 2, key: "sos.https", problem: "true or false"),
        BadCase(text: "[sos]\nhr_high_bpm = 50\n", line: 2, key: "sos.hr_high_bpm", problem: "from 100 to 250, got 50"),
        BadCase(text: "[sos]\nhr_low_bpm = 90\n", line: 2, key: "sos.hr_low_bpm", problem: "from 20 to 80, got 90"),
        BadCase(text: "[sos]\nrearm_s = 1\n", line: 2, key: "sos.rearm_s", problem: "from 5 to 3600"),
        BadCase(text: "[sos]\nsensor_fault_s = 1\n", line: 2, key: "sos.sensor_fault_s", problem: "from 2 to 120"),
        BadCase(text: "[sos]\nstale_s = 1\n", line: 2, key: "sos.stale_s", problem: "from 2 to 60"),
        BadCase(text: "[sos]\ncollapse_ask_s = 3\n", line: 2, key: "sos.collapse_ask_s", problem: "from 5 to 30"),
        BadCase(text: "[sos]\n\ncollapse_ask_s = \"10\"\n", line: 3, key: "sos.collapse_ask_s", problem: "got a string"),
        BadCase(text: "[sos]\nask_timeout_s = 60\n", line: 2, key: "sos.ask_timeout_s", problem: "from 5 to 30"),
        BadCase(text: "[sos]\ncollapse_window_s = 121\n", line: 2, key: "sos.collapse_window_s", problem: "got 121"),
        BadCase(text: "[sos]\ncollapse_evidence_share = 0.9\n", line: 2, key: "sos.collapse_evidence_share", problem: "from 0.15 to 0.6"),
        BadCase(text: "[sos]\nno_signal_no_motion_s = 601\n", line: 2, key: "sos.no_signal_no_motion_s", problem: "got 601"),
        BadCase(text: "[sos]\nfollow_up_every_s = 5\n", line: 2, key: "sos.follow_up_every_s", problem: "or 0 for no follow-ups, got 5"),
        BadCase(text: "[sos]\nfollow_up_for_min = 2000\n", line: 2, key: "sos.follow_up_for_min", problem: "minutes from 0 to 1440"),
        BadCase(text: "[sos]\ndevice_name = 7\n", line: 2, key: "sos.device_name", problem: "got a number"),
        BadCase(text: "[sos]\nattempt_timeout_s = 0\n", line: 2, key: "sos.attempt_timeout_s", problem: "from 1 to 300"),
        BadCase(text: "[sos]\nretry_max_s = 0.5\n", line: 2, key: "sos.retry_max_s", problem: "from 1 to 3600, got 0.5"),
        BadCase(text: "[sos]\nhr_hihg_bpm = 190\n", line: 2, key: "sos.hr_hihg_bpm", problem: "unknown key"),
        BadCase(text: "[upload]\nendpoint = \"https://x\"\n", line: 2, key: "upload.endpoint", problem: "unknown key"),
    ])
    func badValuesAreLocated(_ bad: BadCase) {
        #expect {
            _ = try Self.parse(bad.text)
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.file == Self.file && error.line == bad.line && error.key == bad.key && error.problem.contains(bad.problem)
                && error.description.hasPrefix("\(Self.file):\(bad.line): \(bad.key): ")
        }
    }

    @Test func limitsTooCloseTogetherPointAtTheLaterOfTheTwoKeys() throws {
        // Each in range, together within 20 bpm: the later line is blamed, whichever key it is.
        for (text, line, key) in [
            ("[sos]\nhr_high_bpm = 100\n# a comment\nhr_low_bpm = 80\n", 4, "sos.hr_low_bpm"),
            ("[sos]\nhr_low_bpm = 80\nhr_high_bpm = 100\n", 3, "sos.hr_high_bpm"),
            // Keys after both do not move the blame.
            ("[sos]\nhr_high_bpm = 100\nhr_low_bpm = 80\nenabled = true\n[upload]\nurl = \"\"\n", 3, "sos.hr_low_bpm"),
        ] {
            do {
                _ = try Self.parse(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.file == Self.file)
                #expect(error.line == line, "\(text)")
                #expect(error.key == key, "\(text)")
                #expect(error.problem.contains("sos.hr_high_bpm (100) must be at least 20 bpm above sos.hr_low_bpm"))
            }
        }
        // 20 apart is not enough either; 21 is.
        #expect(throws: ConfigError.self) { try Self.parse("[sos]\nhr_high_bpm = 100\nhr_low_bpm = 80\n") }
        #expect(try Self.parse("[sos]\nhr_high_bpm = 101\nhr_low_bpm = 80\n").sos.rules.highBpm == 101)
        // hr_high_bpm = 50 is refused on its own line before the two are compared, even when
        // hr_low_bpm (40) comes later.
        do {
            _ = try Self.parse("[sos]\nhr_high_bpm = 50\nhr_low_bpm = 40\n")
            Issue.record("accepted hr_high_bpm = 50")
        } catch {
            #expect(error.line == 2)
            #expect(error.key == "sos.hr_high_bpm")
        }
        do {
            _ = try Self.parse("[sos]\nhr_low_bpm = 40\nhr_high_bpm = 50\n")
            Issue.record("accepted hr_high_bpm = 50")
        } catch {
            #expect(error.line == 3)
            #expect(error.key == "sos.hr_high_bpm")
        }
    }
}
