import PacerCore
import Testing
@testable import PacerConfig

/// `[voice]`, `[coach]` and `[power]`.
@Suite(.timeLimit(.minutes(10))) struct VoiceCoachPowerConfigurationTests {
    @Test func defaults() throws {
        let config = try PacerConfiguration.parse("", file: "f")
        #expect(config.voice == VoiceConfiguration())
        #expect(config.voice.enabled && config.voice.output == .alsa && !config.voice.mute)
        #expect(config.voice.wavDirectory == "/var/lib/pacer/speech")
        #expect(config.voice.alsaDevice == "default" && config.voice.voice == "en")
        #expect(config.voice.rateWordsPerMinute == 175 && config.voice.volume == 100)
        #expect(config.coach == CoachConfiguration())
        #expect(config.coach.summaryEveryMeters == 1000 && config.coach.summaryEverySeconds == nil)
        #expect(config.coach.summaryItems == [.distance, .elapsedTime, .averagePace, .heartRate])
        #expect(config.coach.splitCues && config.coach.lowBatteryPercent == 15)
        #expect(config.coach.correctionWindowSeconds == 10 && config.coach.stepGraceSeconds == 15)
        #expect(config.coach.correctionGapSeconds == 20 && config.coach.paceTolerance == 0.03)
        #expect(config.coach.heartRateToleranceBpm == 3 && config.coach.offTargetSeconds == 4)
        #expect(config.coach.maxHeartRate == config.maxHeartRate)
        #expect(config.battery == .automatic)
    }

    @Test func everyKeyIsRead() throws {
        let config = try PacerConfiguration.parse("""
            [voice]
            enabled = false
            output = "wav"
            wav_dir = "/tmp/speech"
            alsa_device = "plughw:1,0"
            voice = "en-gb-x-rp"
            rate_wpm = 200
            volume = 150
            mute = true
            summary_every_km = 0.5
            summary_every_min = 5
            summary = ["hr_zone", "current_pace", "split_pace"]
            split_cues = false
            low_battery_percent = 25
            [coach]
            correction_window_s = 8
            step_grace_s = 0
            correction_gap_s = 30
            pace_tolerance = 0.05
            hr_tolerance_bpm = 5
            off_target_s = 6.5
            [power]
            battery = "axp20x-battery"
            """, file: "f")
        var voice = VoiceConfiguration()
        voice.enabled = false
        voice.output = .wav
        voice.wavDirectory = "/tmp/speech"
        voice.alsaDevice = "plughw:1,0"
        voice.voice = "en-gb-x-rp"
        voice.rateWordsPerMinute = 200
        voice.volume = 150
        voice.mute = true
        #expect(config.voice == voice)
        var coach = CoachConfiguration()
        coach.summaryEveryMeters = 500
        coach.summaryEverySeconds = 300
        coach.summaryItems = [.heartRateZone, .currentPace, .splitPace]
        coach.splitCues = false
        coach.lowBatteryPercent = 25
        coach.correctionWindowSeconds = 8
        coach.stepGraceSeconds = 0
        coach.correctionGapSeconds = 30
        coach.paceTolerance = 0.05
        coach.heartRateToleranceBpm = 5
        coach.offTargetSeconds = 6.5
        #expect(config.coach == coach)
        #expect(config.battery == .supply("axp20x-battery"))
    }

    @Test func zeroTurnsSummariesOff() throws {
        let config = try PacerConfiguration.parse("[voice]\nsummary_every_km = 0\nsummary_every_min = 0\n", file: "f")
        #expect(config.coach.summaryEveryMeters == nil && config.coach.summaryEverySeconds == nil)
    }

    /// Units, the summary distance's unit and the maximum heart rate are settled after the whole
    /// file is read, wherever [units] and [profile] are in it.
    @Test func coachFollowsUnitsAndProfileWhereverTheyAre() throws {
        let imperial = try PacerConfiguration.parse("""
            [voice]
            summary_every_km = 2
            [profile]
            max_hr_bpm = 190
            [units]
            system = "imperial"
            """, file: "f")
        #expect(imperial.coach.units == .imperial)
        #expect(imperial.coach.summaryEveryMeters == 2 * 1609.344)
        #expect(imperial.coach.maxHeartRate == 190)
        let byDefault = try PacerConfiguration.parse("[units]\nsystem = \"imperial\"\n[profile]\nage = 60\n", file: "f")
        #expect(byDefault.coach.summaryEveryMeters == 1609.344)  // the default is 1 of the unit
        #expect(byDefault.coach.maxHeartRate == 166)  // 208 - 0.7 x 60
        #expect(byDefault.coach.maxHeartRate == byDefault.maxHeartRate)
        let metric = try PacerConfiguration.parse("[voice]\nsummary_every_km = 2\n[units]\nsystem = \"metric\"\n", file: "f")
        #expect(metric.coach.units == .metric && metric.coach.summaryEveryMeters == 2000)
    }

    /// `[memory] trim`: on unless turned off (tools/bench-memory compares the two).
    @Test func memoryTrim() throws {
        #expect(try PacerConfiguration.parse("", file: "f").memoryTrim)
        #expect(try !PacerConfiguration.parse("[memory]\ntrim = false\n", file: "f").memoryTrim)
        #expect(throws: ConfigError.self) { try PacerConfiguration.parse("[memory]\ntrim = 0\n", file: "f") }
    }

    @Test func batteryChoices() throws {
        #expect(try PacerConfiguration.parse("[power]\nbattery = \"\"\n", file: "f").battery == .automatic)
        #expect(try PacerConfiguration.parse("[power]\nbattery = \"none\"\n", file: "f").battery == .disabled)
        #expect(try PacerConfiguration.parse("[power]\nbattery = \"BAT0\"\n", file: "f").battery == .supply("BAT0"))
    }

    @Test(arguments: [
        PacerConfigurationTests.BadCase(text: "[voice]\nenabled = 1\n", line: 2, key: "voice.enabled", problem: "true or false"),
        .init(text: "[voice]\noutput = \"pulse\"\n", line: 2, key: "voice.output", problem: "expected \"alsa\", \"wav\" or \"none\", got \"pulse\""),
        .init(text: "[voice]\noutput = 1\n", line: 2, key: "voice.output", problem: "got a number"),
        .init(text: "[voice]\nwav_dir = \"speech\"\n", line: 2, key: "voice.wav_dir", problem: "absolute path"),
        .init(text: "[voice]\nalsa_device = \"\"\n", line: 2, key: "voice.alsa_device", problem: "empty string"),
        .init(text: "[voice]\nvoice = \"en us\"\n", line: 2, key: "voice.voice", problem: "without spaces"),
        .init(text: "[voice]\nvoice = \"\"\n", line: 2, key: "voice.voice", problem: "empty string"),
        .init(text: "[voice]\nrate_wpm = 500\n", line: 2, key: "voice.rate_wpm", problem: "from 80 to 450, got 500"),
        .init(text: "[voice]\nrate_wpm = 79\n", line: 2, key: "voice.rate_wpm", problem: "got 79"),
        .init(text: "[voice]\nvolume = 201\n", line: 2, key: "voice.volume", problem: "from 0 to 200 (100 is normal), got 201"),
        .init(text: "[voice]\nvolume = 50.5\n", line: 2, key: "voice.volume", problem: "got 50.5"),
        .init(text: "[voice]\nmute = \"yes\"\n", line: 2, key: "voice.mute", problem: "true or false"),
        .init(text: "[voice]\nsummary_every_km = -1\n", line: 2, key: "voice.summary_every_km", problem: "or 0 for none, got -1"),
        .init(text: "[voice]\nsummary_every_km = 0.05\n", line: 2, key: "voice.summary_every_km", problem: "got 0.05"),
        .init(text: "[voice]\nsummary_every_km = 101\n", line: 2, key: "voice.summary_every_km", problem: "got 101"),
        .init(text: "[voice]\nsummary_every_min = 0.25\n", line: 2, key: "voice.summary_every_min", problem: "got 0.25"),
        .init(text: "[voice]\nsummary = [\"distance\", \"cadence\"]\n", line: 2, key: "voice.summary", problem: "unknown summary item \"cadence\""),
        .init(text: "[voice]\nsummary = [\"distance\", \"distance\"]\n", line: 2, key: "voice.summary", problem: "\"distance\" is listed twice"),
        .init(text: "[voice]\nsummary = []\n", line: 2, key: "voice.summary", problem: "at least one item"),
        .init(text: "[voice]\nsummary = \"distance\"\n", line: 2, key: "voice.summary", problem: "got a string"),
        .init(text: "[voice]\nsummary = [\"distance\", 3]\n", line: 2, key: "voice.summary", problem: "3 is not a string"),
        .init(text: "[voice]\nsplit_cues = 0\n", line: 2, key: "voice.split_cues", problem: "true or false"),
        .init(text: "[voice]\nlow_battery_percent = 0\n", line: 2, key: "voice.low_battery_percent", problem: "from 1 to 50, got 0"),
        .init(text: "[voice]\nlow_battery_percent = 60\n", line: 2, key: "voice.low_battery_percent", problem: "got 60"),
        .init(text: "[voice]\nspeed = 1\n", line: 2, key: "voice.speed", problem: "unknown key"),
        .init(text: "[coach]\ncorrection_window_s = 2\n", line: 2, key: "coach.correction_window_s", problem: "from 3 to 60, got 2"),
        .init(text: "[coach]\nstep_grace_s = -1\n", line: 2, key: "coach.step_grace_s", problem: "from 0 to 120, got -1"),
        .init(text: "[coach]\ncorrection_gap_s = 4\n", line: 2, key: "coach.correction_gap_s", problem: "from 5 to 300, got 4"),
        .init(text: "[coach]\npace_tolerance = 3\n", line: 2, key: "coach.pace_tolerance", problem: "from 0 to 0.2 (0.03 is 3 %), got 3"),
        .init(text: "[coach]\nhr_tolerance_bpm = 2.5\n", line: 2, key: "coach.hr_tolerance_bpm", problem: "got 2.5"),
        .init(text: "[coach]\nhr_tolerance_bpm = 21\n", line: 2, key: "coach.hr_tolerance_bpm", problem: "from 0 to 20, got 21"),
        .init(text: "[coach]\noff_target_s = 61\n", line: 2, key: "coach.off_target_s", problem: "from 0 to 60, got 61"),
        .init(text: "[coach]\nsummary_every_km = 1\n", line: 2, key: "coach.summary_every_km", problem: "unknown key"),
        .init(text: "[power]\nbattery = \"../BAT0\"\n", line: 2, key: "power.battery", problem: "power supply name"),
        .init(text: "[power]\nbattery = \"..\"\n", line: 2, key: "power.battery", problem: "power supply name"),
        .init(text: "[power]\nbattery = \"BAT 0\"\n", line: 2, key: "power.battery", problem: "power supply name"),
        .init(text: "[power]\nbattery = 0\n", line: 2, key: "power.battery", problem: "got a number"),
        // The config file has no arrays of tables: `[[` stays what it always was.
        .init(text: "[[step]]\ntype = \"run\"\n", line: 1, key: nil, problem: "unknown table \"[[step]]\" (expected [[privacy_zone]])"),
    ])
    func badLinesAreLocated(_ bad: PacerConfigurationTests.BadCase) {
        #expect {
            _ = try PacerConfiguration.parse(bad.text, file: "/etc/pacer/pacer.toml")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.file == "/etc/pacer/pacer.toml" && error.line == bad.line && error.key == bad.key
                && error.description.contains(bad.problem)
        }
    }
}
