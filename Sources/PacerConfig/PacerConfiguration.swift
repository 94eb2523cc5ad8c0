import PacerCore

/// Pacer's configuration (`/etc/pacer/pacer.toml`). Every key is optional; defaults are in the
/// property initialisers and documented in config/pacer.toml.
public struct PacerConfiguration: Sendable, Equatable {
    public enum UnitSystem: String, Sendable, Equatable {
        case metric, imperial
    }

    public static let defaultPath = "/etc/pacer/pacer.toml"

    public var units: UnitSystem = .metric
    public var tracking = TrackerConfiguration()
    /// Whether the file sets `[tracking] split_distance_m` (else splits are one of `units`), and
    /// `[voice] summary_every_km` in `units`: what `following(accountUnits:)` settles again.
    private var splitDistanceSet = false
    private var summaryEveryUnits = 1.0

    /// gpsd to read fixes from.
    public var gpsHost = "localhost"
    public var gpsPort = 2947

    /// Where runs are stored.
    public var databasePath = "/var/lib/pacer/pacer.db"
    /// Raw gpsd lines of uploaded runs are removed after this many days (nil: kept for ever).
    public var keepRawDays: Int? = 30

    /// The control socket pacerctl talks to, and the group allowed to use it.
    public var controlSocket = "/run/pacer/control.sock"
    public var controlGroup = "pacer"

    /// The runner: age and maximum heart rate feed HR zones and SOS defaults.
    public var age = 35
    /// nil: estimated from the age (Tanaka: 208 − 0.7 × age).
    public var maxHeartRateSetting: Int?
    /// Time zone for weekly/monthly/yearly totals and goals, and of the times in SOS texts (nil:
    /// the system's).
    public var timeZone: String?
    /// The wearer's name (`[profile] name`), which every SOS message gives first; nil: not set.
    public var wearerName: String?

    /// Buttons: evdev device (nil: no buttons) and the key codes that act as the run button.
    public var buttonDevice: String?
    public var buttonKeyCodes: [Int] = [28, 0x100]  // KEY_ENTER, BTN_0
    public var longPressSeconds = 1.5
    public var veryLongPressSeconds = 5.0

    /// Start a run by itself on sustained movement.
    public var autoStart = false
    public var autoStartSpeed = 1.5
    public var autoStartAfterSeconds = 15.0

    /// The paired heart-rate strap and an optional backup, as "AA:BB:CC:DD:EE:FF" (nil: not set
    /// here; `pacerctl strap pair` may have chosen one), and the adapter (nil: the first).
    public var heartRateStrap: String?
    public var heartRateBackupStrap: String?
    public var bluetoothAdapter: String?

    /// Speech output (`[voice]`).
    public var voice = VoiceConfiguration()
    /// What the coach says and when: `[voice]` summaries, splits and battery, `[coach]` workout
    /// corrections. After parsing, its units and maximum heart rate are `units` and `maxHeartRate`.
    public var coach = CoachConfiguration()
    /// The battery to watch (`[power] battery`).
    public var battery: BatteryMonitoring = .automatic
    /// Give back code pages and free heap every ten minutes (`[memory] trim`); read at start only.
    public var memoryTrim = true
    /// The SOS watcher and its channels (`[sos]`).
    public var sos = SOSConfiguration()
    /// The cloud service (`[upload]`).
    public var upload = UploadConfiguration()
    /// Race mode (`[race]`).
    public var race = RaceSettings()

    public init() {
        settleDerived()
    }

    /// Values that follow from others (the age): set by `parse` once the whole file is read.
    private mutating func settleDerived() {
        sos.rules.enabled = sos.enabledSetting ?? (age >= SOSConfiguration.enabledFromAge)
        sos.rules.highBpm = sos.highBpmSetting ?? maxHeartRate + 15
    }

    public var maxHeartRate: Int {
        maxHeartRateSetting ?? Int((208 - 0.7 * Double(age)).rounded())
    }

    /// The configuration as a linked device uses it: in the units of the account that owns it
    /// ("km" or "mi", from the sync's profile), which the runner chose on the web; the file's
    /// `[units]` until an account says (nil, or a value this version does not know).
    public func following(accountUnits: String?) -> PacerConfiguration {
        let system: UnitSystem
        switch accountUnits {
        case "km"?: system = .metric
        case "mi"?: system = .imperial
        default: return self
        }
        var config = self
        config.units = system
        config.settleUnits()
        return config
    }

    /// What follows from `units`: the split length (unless the file sets one), the coach's words
    /// and its summaries' spacing.
    private mutating func settleUnits() {
        if !splitDistanceSet { tracking.splitDistanceMeters = units == .imperial ? 1609.344 : TrackerConfiguration().splitDistanceMeters }
        coach.units = units == .imperial ? .imperial : .metric
        coach.summaryEveryMeters = summaryEveryUnits == 0 ? nil : summaryEveryUnits * (units == .imperial ? 1609.344 : 1000)
    }

    /// Parses a config file's text. `file` is only used in error messages.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> PacerConfiguration {
        var config = PacerConfiguration()
        var splitDistanceSet = false
        // In kilometres or miles, as [units] says; that may come later in the file.
        var summaryEveryUnits = 1.0
        // Each entry by key, for the rules between keys (`checkRelatedKeys`).
        var written: [String: TOMLEntry] = [:]
        // [[privacy_zone]] tables: lat, lon and radius_m each, gathered by their index.
        var zones: [Int: (lat: Double?, lon: Double?, radius: Double?, line: Int)] = [:]
        let document = try TOMLSubset.parseDocument(text, file: file, tableArrays: ["privacy_zone"])
        for header in document.tables where header.name == "privacy_zone" {
            zones[header.index] = (nil, nil, nil, header.line)
        }
        for entry in document.entries {
            let reader = EntryReader(entry: entry, file: file)
            written[entry.key] = entry
            switch entry.key {
            case "units.system":
                guard case .string(let s) = entry.value, let system = UnitSystem(rawValue: s) else {
                    throw reader.fail("expected \"metric\" or \"imperial\"")
                }
                config.units = system
            case "tracking.split_distance_m":
                config.tracking.splitDistanceMeters = try reader.number(in: 100...100_000, "a distance in metres from 100 to 100000")
                splitDistanceSet = true
            case "tracking.resume_above_mps":
                config.tracking.resumeAboveSpeed = try reader.number(in: 0.1...5, "a speed in m/s from 0.1 to 5")
            case "tracking.pause_below_mps":
                config.tracking.pauseBelowSpeed = try reader.number(in: 0.05...5, "a speed in m/s from 0.05 to 5")
            case "tracking.gps_lost_after_s":
                config.tracking.gpsLostAfterSeconds = try reader.number(in: 2...120, "seconds from 2 to 120")
            case "gps.host":
                config.gpsHost = try reader.string("a host name or address in quotes", allowEmpty: false)
            case "gps.port":
                config.gpsPort = try reader.integer(in: 1...65535, "a TCP port from 1 to 65535")
            case "storage.path":
                config.databasePath = try reader.absolutePath()
            case "storage.keep_raw_days":
                let days = try reader.integer(in: 0...36_500, "a whole number of days from 0 to 36500 (0 keeps them for ever)")
                config.keepRawDays = days == 0 ? nil : days
            case "control.socket":
                config.controlSocket = try reader.absolutePath()
            case "control.group":
                config.controlGroup = try reader.string("a group name in quotes", allowEmpty: false)
            case "profile.age":
                config.age = try reader.integer(in: 10...100, "an age in years from 10 to 100")
            case "profile.max_hr_bpm":
                let bpm = try reader.integer(in: 0...240, "beats per minute from 100 to 240, or 0 to estimate it from the age")
                guard bpm == 0 || bpm >= 100 else { throw reader.fail("expected beats per minute from 100 to 240, or 0 to estimate it from the age, got \(bpm)") }
                config.maxHeartRateSetting = bpm == 0 ? nil : bpm
            case "profile.name":
                let name = try reader.string("a name in quotes, e.g. \"Anna Rossi\", or \"\" for none", allowEmpty: true)
                if let hidden = WearerName.firstHidden(name) {
                    let code = String(hidden.value, radix: 16, uppercase: true)
                    throw reader.fail("expected a name of plain characters, got one with an invisible or control character (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code))")
                }
                let cleaned = WearerName.cleaned(name)
                guard name.unicodeScalars.count <= WearerName.maxLength else {
                    throw reader.fail("expected a name of at most \(WearerName.maxLength) characters, got \(name.unicodeScalars.count)")
                }
                config.wearerName = cleaned
            case "profile.timezone":
                let zone = try reader.string("a zone name in quotes, e.g. \"Europe/Rome\", or \"\" for the system's", allowEmpty: true)
                config.timeZone = zone.isEmpty ? nil : zone
            case "buttons.device":
                let path = try reader.string("a device path in quotes, or \"\" for no buttons", allowEmpty: true)
                guard path.isEmpty || path.hasPrefix("/") else { throw reader.fail("expected an absolute path, got \"\(path)\"") }
                config.buttonDevice = path.isEmpty ? nil : path
            case "buttons.keys":
                config.buttonKeyCodes = try reader.integers(in: 1...0x2ff, "an array of evdev key codes, e.g. [28, 256]")
            case "buttons.long_press_s":
                config.longPressSeconds = try reader.number(in: 0.3...10, "seconds from 0.3 to 10")
            case "buttons.very_long_press_s":
                config.veryLongPressSeconds = try reader.number(in: 1...30, "seconds from 1 to 30")
            case "run.auto_start":
                config.autoStart = try reader.bool()
            case "run.auto_start_speed_mps":
                config.autoStartSpeed = try reader.number(in: 0.5...10, "a speed in m/s from 0.5 to 10")
            case "run.auto_start_after_s":
                config.autoStartAfterSeconds = try reader.number(in: 3...300, "seconds from 3 to 300")
            case "hr.strap":
                config.heartRateStrap = try reader.bluetoothAddress()
            case "hr.backup_strap":
                config.heartRateBackupStrap = try reader.bluetoothAddress()
            case "hr.adapter":
                let name = try reader.string("an adapter name in quotes, e.g. \"hci0\", or \"\" for the first", allowEmpty: true)
                guard name.isEmpty || (name.hasPrefix("hci") && name.dropFirst(3).allSatisfy(\.isNumber) && name.count > 3) else {
                    throw reader.fail("expected an adapter name like \"hci0\", got \"\(name)\"")
                }
                config.bluetoothAdapter = name.isEmpty ? nil : name
            case "voice.enabled":
                config.voice.enabled = try reader.bool()
            case "voice.output":
                let s = try reader.string("\"alsa\", \"wav\" or \"none\"", allowEmpty: true)
                guard let output = VoiceConfiguration.Output(rawValue: s) else {
                    throw reader.fail("expected \"alsa\", \"wav\" or \"none\", got \"\(s)\"")
                }
                config.voice.output = output
            case "voice.wav_dir":
                config.voice.wavDirectory = try reader.absolutePath()
            case "voice.alsa_device":
                config.voice.alsaDevice = try reader.string("an ALSA device name in quotes, e.g. \"default\" or \"plughw:1,0\"", allowEmpty: false)
            case "voice.voice":
                let name = try reader.string("an espeak-ng voice name in quotes, e.g. \"en\" or \"en-us\"", allowEmpty: false)
                guard !name.contains(where: { $0 == " " || $0 == "\t" }) else {
                    throw reader.fail("expected an espeak-ng voice name without spaces, e.g. \"en-us\", got \"\(name)\"")
                }
                config.voice.voice = name
            case "voice.rate_wpm":
                config.voice.rateWordsPerMinute = try reader.integer(in: 80...450, "words per minute from 80 to 450")
            case "voice.volume":
                config.voice.volume = try reader.integer(in: 0...200, "a volume from 0 to 200 (100 is normal)")
            case "voice.mute":
                config.voice.mute = try reader.bool()
            case "voice.summary_every_km":
                let what = "a distance from 0.1 to 100 (kilometres, or miles with imperial units), or 0 for none"
                summaryEveryUnits = try reader.number(in: 0...100, what)
                guard summaryEveryUnits == 0 || summaryEveryUnits >= 0.1 else { throw reader.fail("expected \(what), got \(show(summaryEveryUnits))") }
            case "voice.summary_every_min":
                let what = "minutes from 0.5 to 600, or 0 for none"
                let minutes = try reader.number(in: 0...600, what)
                guard minutes == 0 || minutes >= 0.5 else { throw reader.fail("expected \(what), got \(show(minutes))") }
                config.coach.summaryEverySeconds = minutes == 0 ? nil : minutes * 60
            case "voice.summary":
                config.coach.summaryItems = try reader.summaryItems()
            case "voice.split_cues":
                config.coach.splitCues = try reader.bool()
            case "voice.low_battery_percent":
                config.coach.lowBatteryPercent = try reader.integer(in: 1...50, "a percentage from 1 to 50")
            case "coach.correction_window_s":
                config.coach.correctionWindowSeconds = try reader.number(in: 3...60, "seconds from 3 to 60")
            case "coach.step_grace_s":
                config.coach.stepGraceSeconds = try reader.number(in: 0...120, "seconds from 0 to 120")
            case "coach.correction_gap_s":
                config.coach.correctionGapSeconds = try reader.number(in: 5...300, "seconds from 5 to 300")
            case "coach.pace_tolerance":
                config.coach.paceTolerance = try reader.number(in: 0...0.2, "a fraction from 0 to 0.2 (0.03 is 3 %)")
            case "coach.hr_tolerance_bpm":
                config.coach.heartRateToleranceBpm = try reader.integer(in: 0...20, "beats per minute from 0 to 20")
            case "coach.off_target_s":
                config.coach.offTargetSeconds = try reader.number(in: 0...60, "seconds from 0 to 60")
            case "power.battery":
                config.battery = try reader.batteryMonitoring()
            case "memory.trim":
                config.memoryTrim = try reader.bool()
            case "sos.enabled":
                config.sos.enabledSetting = try reader.bool()
            case "sos.hr_high_bpm":
                config.sos.highBpmSetting = try reader.integer(in: 100...250, "beats per minute from 100 to 250")
            case "sos.hr_low_bpm":
                config.sos.rules.lowBpm = try reader.integer(in: 20...80, "beats per minute from 20 to 80")
            case "sos.confirm_window_s":
                let limit = SOSRules.maximumConfirmWindowSeconds
                config.sos.rules.confirmWindowSeconds = try reader.number(
                    in: 1...limit, "seconds from 1 to \(show(limit)) (the window and the dispatch must fit in the 5 s deadline)")
            case "sos.confirm_samples":
                config.sos.rules.confirmSamples = try reader.integer(in: 2...10, "a number of samples from 2 to 10 (1 would let one artefact raise an alert)")
            case "sos.rearm_s":
                config.sos.rules.rearmSeconds = try reader.number(in: 5...3600, "seconds from 5 to 3600")
            case "sos.sensor_fault_s":
                config.sos.rules.faultAfterSeconds = try reader.number(in: 2...120, "seconds from 2 to 120")
            case "sos.stale_s":
                config.sos.rules.staleAfterSeconds = try reader.number(in: 2...60, "seconds from 2 to 60")
            case "sos.collapse_window_s":
                config.sos.rules.collapseWindowSeconds = try reader.number(in: 5...120, "seconds from 5 to 120")
            case "sos.collapse_evidence_share":
                config.sos.rules.evidenceShare = try reader.number(
                    in: 0.15...0.6, "a share of the recent heart rate from 0.15 to 0.6 (0.3: a fall of 30 % is strong evidence)")
            case "sos.no_signal_no_motion_s":
                config.sos.rules.noSignalNoMotionSeconds = try reader.number(in: 10...600, "seconds from 10 to 600")
            case "sos.collapse_ask_s", "sos.ask_timeout_s":
                // ask_timeout_s is the key's name before round 3; its old values above 30 are refused.
                config.sos.rules.collapseAskSeconds = try reader.number(in: 5...30, "seconds from 5 to 30")
            case "sos.follow_up_every_s":
                let what = "seconds from 10 to 3600, or 0 for no follow-ups"
                let seconds = try reader.number(in: 0...3600, what)
                guard seconds == 0 || seconds >= 10 else { throw reader.fail("expected \(what), got \(show(seconds))") }
                config.sos.rules.followUpEverySeconds = seconds
            case "sos.follow_up_for_min":
                config.sos.rules.followUpForSeconds = try reader.number(in: 0...1440, "minutes from 0 to 1440") * 60
            case "sos.contacts":
                config.sos.contacts = try reader.phoneNumbers()
            case "sos.call":
                config.sos.call = try reader.callNumber()
            case "sos.call_audio_device":
                let device = try reader.string("an ALSA device name in quotes, e.g. \"plughw:2,0\", or \"\" for none", allowEmpty: true)
                config.sos.callAudioDevice = device.isEmpty ? nil : device
            case "sos.sms":
                config.sos.sms = try reader.bool()
            case "sos.https":
                config.sos.https = try reader.bool()
            case "sos.hook":
                let argv = try reader.strings("a command as an array of strings, e.g. [\"/usr/local/bin/notify\", \"--urgent\"], or [] for none")
                guard argv.isEmpty || argv[0].hasPrefix("/") else { throw reader.fail("expected the command's absolute path first, got \"\(argv[0])\"") }
                config.sos.hook = argv
            case "sos.map_link":
                let link = try reader.string("a URL with {lat} and {lon}, e.g. \"\(AlertText.defaultMapLink)\"", allowEmpty: false)
                // The braces are placeholders; what is sent must be plain GSM-7 (one SMS of 160).
                let filled = link.replacing("{lat}", with: "0").replacing("{lon}", with: "0")
                guard link.contains("{lat}"), link.contains("{lon}"), GSM7.isBasic(filled), link.count <= 60 else {
                    throw reader.fail("expected a URL of at most 60 plain characters with {lat} and {lon}, got \"\(link)\"")
                }
                config.sos.mapLink = link
            case "sos.device_name":
                let name = try reader.string("a name in quotes, or \"\" for the host name", allowEmpty: true)
                config.sos.deviceName = name.isEmpty ? nil : name
            case "sos.attempt_timeout_s":
                config.sos.attemptTimeoutSeconds = try reader.number(in: 1...300, "seconds from 1 to 300")
            case "sos.retry_max_s":
                config.sos.retryMaxSeconds = try reader.number(in: 1...3600, "seconds from 1 to 3600")
            case "upload.url":
                let url = try reader.string("a URL in quotes, e.g. \"https://pacer.example.org\", or \"\" for none", allowEmpty: true)
                let host = url.drop(while: { $0 != "/" }).dropFirst(2).prefix { $0 != "/" }
                guard url.isEmpty || ((url.hasPrefix("https://") || url.hasPrefix("http://")) && !host.isEmpty) else {
                    throw reader.fail("expected a URL starting with https:// (or http://), got \"\(url)\"")
                }
                // Never allowed, whatever allow_http says; to a loopback address it depends on it.
                guard !url.hasPrefix("http://") || UploadConfiguration.isLoopback(url) else { throw reader.fail(plainHTTPProblem) }
                config.upload.url = url.isEmpty ? nil : String(url.reversed().drop(while: { $0 == "/" }).reversed())
            case "upload.token":
                let token = try reader.string("a token in quotes", allowEmpty: true)
                config.upload.token = token.isEmpty ? nil : token
            case "upload.ca_file":
                config.upload.caFile = try reader.absolutePath()
            case "upload.client_cert":
                config.upload.clientCertificate = try reader.absolutePath()
            case "upload.client_key":
                config.upload.clientKey = try reader.absolutePath()
            case "upload.allow_http":
                config.upload.allowPlainHTTP = try reader.bool()
            case "upload.live_position_every_s":
                let what = "seconds from 5 to 3600, or 0 for no live position"
                let seconds = try reader.number(in: 0...3600, what)
                guard seconds == 0 || seconds >= 5 else { throw reader.fail("expected \(what), got \(show(seconds))") }
                config.upload.livePositionEverySeconds = seconds
            case "upload.sync_every_s":
                config.upload.syncEverySeconds = try reader.number(in: 5...3600, "seconds from 5 to 3600")
            case "upload.sync":
                config.upload.sync = try reader.bool()
            case "upload.state_every_s":
                config.upload.stateEverySeconds = try reader.number(in: 5...3600, "seconds from 5 to 3600")
            case "race.position_every_s":
                config.race.positionEverySeconds = try reader.number(in: 1...60, "seconds from 1 to 60")
            case "race.reminder_min":
                config.race.reminderMinutes = try reader.integer(in: 0...180, "minutes from 0 to 180 (0: no reminder)")
            case "privacy_zone.lat":
                zones[entry.tableIndex ?? 0, default: (nil, nil, nil, entry.line)].lat = try reader.number(in: -90...90, "a latitude in degrees from -90 to 90")
            case "privacy_zone.lon":
                zones[entry.tableIndex ?? 0, default: (nil, nil, nil, entry.line)].lon = try reader.number(in: -180...180, "a longitude in degrees from -180 to 180")
            case "privacy_zone.radius_m":
                zones[entry.tableIndex ?? 0, default: (nil, nil, nil, entry.line)].radius = try reader.number(in: 10...10_000, "a radius in metres from 10 to 10000")
            default:
                throw reader.fail("unknown key (check its spelling and section)")
            }
        }
        // The coach speaks in the config's units and judges zones by the profile's maximum, which
        // may be set anywhere in the file: settled once everything is read.
        config.splitDistanceSet = splitDistanceSet
        config.summaryEveryUnits = summaryEveryUnits
        config.settleUnits()
        config.coach.maxHeartRate = config.maxHeartRate
        config.settleDerived()
        for index in zones.keys.sorted() {
            let zone = zones[index]!
            guard let lat = zone.lat, let lon = zone.lon, let radius = zone.radius else {
                let missing = [zone.lat == nil ? "lat" : nil, zone.lon == nil ? "lon" : nil, zone.radius == nil ? "radius_m" : nil].compactMap { $0 }
                throw ConfigError(file: file, line: zone.line, key: "privacy_zone[\(index)]",
                                  problem: "a privacy zone needs lat, lon and radius_m; missing \(missing.joined(separator: ", "))")
            }
            config.upload.privacyZones.append(PrivacyZone(center: Coordinate(latitude: lat, longitude: lon), radiusMeters: radius))
        }
        try config.checkRelatedKeys(written: written, file: file)
        return config
    }

    private static let plainHTTPProblem = "plain http:// is only allowed to a loopback address with upload.allow_http = true; use https://"

    /// The rules between two keys. They run once the whole file is read, so that the order the
    /// keys are written in never matters, and blame the later of the two lines (a key left at its
    /// default has none). When several fail, the one blamed earliest in the file is reported.
    private func checkRelatedKeys(written: [String: TOMLEntry], file: String) throws(ConfigError) {
        let rules: [(keys: [String], broken: Bool, problem: String)] = [
            (["tracking.pause_below_mps", "tracking.resume_above_mps"], tracking.pauseBelowSpeed >= tracking.resumeAboveSpeed,
             "tracking.pause_below_mps must be lower than tracking.resume_above_mps"),
            (["buttons.long_press_s", "buttons.very_long_press_s"], longPressSeconds >= veryLongPressSeconds,
             "buttons.long_press_s must be shorter than buttons.very_long_press_s"),
            (["sos.hr_high_bpm", "sos.hr_low_bpm"], sos.rules.highBpm <= sos.rules.lowBpm + 20,
             "sos.hr_high_bpm (\(sos.rules.highBpm)) must be at least 20 bpm above sos.hr_low_bpm (\(sos.rules.lowBpm))"),
            (["sos.confirm_window_s", "sos.confirm_samples"],
             !SOSRules.confirmationFits(windowSeconds: sos.rules.confirmWindowSeconds, samples: sos.rules.confirmSamples),
             "sos.confirm_samples (\(sos.rules.confirmSamples)) samples at 1 Hz span \(sos.rules.confirmSamples - 1) s, more than sos.confirm_window_s (\(show(sos.rules.confirmWindowSeconds)) s): they could never confirm a breach within the 5 s deadline"),
            // A non-loopback http:// URL is refused on its own line while the file is read.
            (["upload.url", "upload.allow_http"], upload.url?.hasPrefix("http://") == true && !upload.allowPlainHTTP,
             Self.plainHTTPProblem),
        ]
        let errors = rules.filter(\.broken).map { rule in
            let later = rule.keys.compactMap { written[$0] }.max { $0.line < $1.line }
            return ConfigError(file: file, line: later?.line ?? 0, key: later?.displayKey ?? rule.keys[0], problem: rule.problem)
        }
        if let first = errors.min(by: { $0.line < $1.line }) { throw first }
    }
}

extension EntryReader {
    /// `["+393471234567", …]`: international numbers, as ModemManager sends them.
    fileprivate func phoneNumbers() throws(ConfigError) -> [String] {
        let numbers = try strings("an array of phone numbers in international format, e.g. [\"+393471234567\"]")
        for number in numbers { try checkInternational(number) }
        guard Set(numbers).count == numbers.count else { throw fail("a phone number is listed twice") }
        return numbers
    }

    /// The emergency short numbers `[sos] call` takes besides international ones: they have no
    /// international form (112 in Europe and on every GSM phone, 911, 999, 000).
    static let emergencyShortNumbers: Set<String> = ["112", "911", "999", "000"]

    /// `"+393471234567"`, an emergency short number, or `""` for no call.
    fileprivate func callNumber() throws(ConfigError) -> String? {
        let number = try string("a phone number in international format, e.g. \"+393471234567\", \"112\", or \"\" for no call", allowEmpty: true)
        if number.isEmpty { return nil }
        if Self.emergencyShortNumbers.contains(number) { return number }
        try checkInternational(number, or: " or one of \(Self.emergencyShortNumbers.sorted().joined(separator: ", "))")
        return number
    }

    private func checkInternational(_ number: String, or alternatives: String = "") throws(ConfigError) {
        let digits = number.dropFirst()
        guard number.hasPrefix("+"), (6...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw fail("expected a phone number in international format (+ and 6 to 15 digits, no spaces)\(alternatives), got \"\(number)\"")
        }
    }

    /// `["distance", "elapsed_time"]`: CoachConfiguration.SummaryItem raw values, each once.
    fileprivate func summaryItems() throws(ConfigError) -> [CoachConfiguration.SummaryItem] {
        let known = CoachConfiguration.SummaryItem.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        let names = try strings("an array of summary items from \(known)")
        guard !names.isEmpty else {
            throw fail("expected at least one item; for no summaries set summary_every_km = 0 and summary_every_min = 0")
        }
        var items: [CoachConfiguration.SummaryItem] = []
        for name in names {
            guard let item = CoachConfiguration.SummaryItem(rawValue: name) else {
                throw fail("unknown summary item \"\(name)\" (expected \(known))")
            }
            guard !items.contains(item) else { throw fail("summary item \"\(name)\" is listed twice") }
            items.append(item)
        }
        return items
    }

    /// "" finds the battery, "none" turns monitoring off, anything else names a supply.
    fileprivate func batteryMonitoring() throws(ConfigError) -> BatteryMonitoring {
        let name = try string("a power supply name in quotes, e.g. \"BAT0\", \"\" to find it, or \"none\"", allowEmpty: true)
        switch name {
        case "": return .automatic
        case "none": return .disabled
        default:
            // It becomes a path component under /sys/class/power_supply: no way out of it.
            guard name != ".", name != "..", name.count <= 64,
                  name.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0 != "/" && $0.value < 0x7f })
            else { throw fail("expected a power supply name as in /sys/class/power_supply, e.g. \"BAT0\", got \"\(name)\"") }
            return .supply(name)
        }
    }
}
