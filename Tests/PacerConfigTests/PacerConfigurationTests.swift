import Foundation
import PacerCore
import Testing
@testable import PacerConfig

@Suite(.timeLimit(.minutes(10))) struct PacerConfigurationTests {
    @Test func emptyFileGivesDefaults() throws {
        let config = try PacerConfiguration.parse("# nothing here\n\n", file: "pacer.toml")
        #expect(config == PacerConfiguration())
        #expect(config.tracking.splitDistanceMeters == 1000)
    }

    @Test func readsKnownKeys() throws {
        let config = try PacerConfiguration.parse("""
            [units]
            system = "imperial"   # miles
            [tracking]
            pause_below_mps = 0.4
            resume_above_mps = 0.9
            gps_lost_after_s = 8
            """, file: "pacer.toml")
        #expect(config.units == .imperial)
        #expect(config.tracking.splitDistanceMeters == 1609.344)
        #expect(config.tracking.pauseBelowSpeed == 0.4)
        #expect(config.tracking.resumeAboveSpeed == 0.9)
        #expect(config.tracking.gpsLostAfterSeconds == 8)
    }

    @Test func storageAndHistoryKeys() throws {
        let config = try PacerConfiguration.parse("""
            [storage]
            path = "/data/pacer.db"
            keep_raw_days = 0
            [profile]
            timezone = "Europe/Rome"
            """, file: "f")
        #expect(config.databasePath == "/data/pacer.db")
        #expect(config.keepRawDays == nil)
        #expect(config.timeZone == "Europe/Rome")
        #expect(PacerConfiguration().keepRawDays == 30)
    }

    @Test func explicitSplitDistanceWinsOverUnits() throws {
        let config = try PacerConfiguration.parse("[units]\nsystem = \"imperial\"\n[tracking]\nsplit_distance_m = 400\n", file: "f")
        #expect(config.tracking.splitDistanceMeters == 400)
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var key: String?
        var problem: String
        var testDescription: String { problem }
    }

    @Test(arguments: [
        BadCase(text: "[tracking]\nsplit_distance_m = abc\n", line: 2, key: "tracking.split_distance_m", problem: "`abc` is not a number"),
        BadCase(text: "[tracking]\nsplit_distance_m = \"1000\"\n", line: 2, key: "tracking.split_distance_m", problem: "got a string"),
        BadCase(text: "[tracking]\n\nsplit_distance_m = -5\n", line: 3, key: "tracking.split_distance_m", problem: "got -5"),
        BadCase(text: "[tracking]\nsplit_distanse_m = 1000\n", line: 2, key: "tracking.split_distanse_m", problem: "unknown key"),
        BadCase(text: "[units]\nsystem = \"furlongs\"\n", line: 2, key: "units.system", problem: "\"metric\" or \"imperial\""),
        BadCase(text: "[tracking\n", line: 1, key: nil, problem: "malformed section header"),
        BadCase(text: "[tracking]\nsplit_distance_m = fast\n", line: 2, key: "tracking.split_distance_m", problem: "`fast` is not a number"),
        BadCase(text: "[tracking]\nsplit_distance_m = 1000 m\n", line: 2, key: "tracking.split_distance_m", problem: "unexpected text after the value"),
        BadCase(text: "[storage]\nkeep_raw_days = 1.5\n", line: 2, key: "storage.keep_raw_days", problem: "whole number"),
        BadCase(text: "[storage]\npath = \"pacer.db\"\n", line: 2, key: "storage.path", problem: "absolute path"),
        BadCase(text: "[storage]\ndatabase = \"/x.db\"\n", line: 2, key: "storage.database", problem: "unknown key"),
        BadCase(text: "[gps]\nport = 70000\n", line: 2, key: "gps.port", problem: "TCP port from 1 to 65535, got 70000"),
        BadCase(text: "[gps]\nport = 2947.5\n", line: 2, key: "gps.port", problem: "got 2947.5"),
        BadCase(text: "[gps]\nhost = \"\"\n", line: 2, key: "gps.host", problem: "empty string"),
        BadCase(text: "[control]\n\nsocket = \"control.sock\"\n", line: 3, key: "control.socket", problem: "absolute path"),
        BadCase(text: "[profile]\nage = \"35\"\n", line: 2, key: "profile.age", problem: "got a string"),
        BadCase(text: "[profile]\nmax_hr_bpm = 50\n", line: 2, key: "profile.max_hr_bpm", problem: "got 50"),
        BadCase(text: "[buttons]\nkeys = [28, \"enter\"]\n", line: 2, key: "buttons.keys", problem: "a string is not one"),
        BadCase(text: "[buttons]\nlong_press_s = 6\n", line: 2, key: "buttons.long_press_s", problem: "shorter than"),
        BadCase(text: "[run]\nauto_start = \"yes\"\n", line: 2, key: "run.auto_start", problem: "true or false"),
        BadCase(text: "hello\n", line: 1, key: nil, problem: "expected `key = value`"),
        BadCase(text: "[units]\nsystem = \"metric\n", line: 2, key: "units.system", problem: "unterminated string"),
        BadCase(text: "[tracking]\npause_below_mps = 1\npause_below_mps = 1\n", line: 3, key: "tracking.pause_below_mps", problem: "set twice"),
        BadCase(text: "[tracking]\npause_below_mps = 2\n", line: 2, key: "tracking.pause_below_mps", problem: "must be lower"),
    ])
    func badLinesAreLocated(_ bad: BadCase) {
        #expect {
            _ = try PacerConfiguration.parse(bad.text, file: "/etc/pacer/pacer.toml")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.file == "/etc/pacer/pacer.toml" && error.line == bad.line && error.key == bad.key
                && error.description.contains(bad.problem)
        }
    }

    @Test func errorTextNamesFileLineAndKey() {
        let error = ConfigError(file: "/etc/pacer/pacer.toml", line: 12, key: "tracking.split_distance_m", problem: "expected a number")
        #expect(error.description == "/etc/pacer/pacer.toml:12: tracking.split_distance_m: expected a number")
    }

    @Test func shippedDefaultConfigParses() throws {
        // config/pacer.toml documents every key; it must always be valid.
        let path = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let text = try String(contentsOfFile: "/" + path + "/config/pacer.toml", encoding: .utf8)
        // Its values are the defaults, so what it says is what an empty file gives.
        #expect(try PacerConfiguration.parse(text, file: "config/pacer.toml") == PacerConfiguration())
        // Every key is documented there, set or commented out with its default.
        let documented = Set(text.split(separator: "\n").compactMap { line -> String? in
            let body = line.hasPrefix("# ") ? line.dropFirst(2) : line[...]
            guard let eq = body.firstIndex(of: "="), !body.hasPrefix("#"), !body.hasPrefix("[") else { return nil }
            let key = body[..<eq].trimmingCharacters(in: .whitespaces)
            return key.contains(" ") || key.isEmpty ? nil : key
        })
        for key in ["system", "split_distance_m", "resume_above_mps", "pause_below_mps", "gps_lost_after_s", "host", "port",
                    "path", "keep_raw_days", "socket", "group", "age", "max_hr_bpm", "timezone", "name", "device", "keys",
                    "long_press_s", "very_long_press_s", "auto_start", "auto_start_speed_mps", "auto_start_after_s",
                    "strap", "backup_strap", "adapter",
                    "enabled", "output", "wav_dir", "alsa_device", "voice", "rate_wpm", "volume", "mute", "summary_every_km",
                    "summary_every_min", "summary", "split_cues", "low_battery_percent",
                    "correction_window_s", "step_grace_s", "correction_gap_s", "pace_tolerance", "hr_tolerance_bpm", "off_target_s",
                    "battery", "position_every_s", "reminder_min"] {
            #expect(documented.contains(key), "\(key) is not documented in config/pacer.toml")
        }
    }

    @Test(.timeLimit(.minutes(10))) func theWearersNameIsPlainText() throws {
        #expect(try PacerConfiguration.parse("[profile]\nname = \"  Anna   Rossi \"\n", file: "pacer.toml").wearerName == "Anna Rossi")
        #expect(try PacerConfiguration.parse("[profile]\nname = \"\"\n", file: "pacer.toml").wearerName == nil)
        #expect(try PacerConfiguration.parse("[profile]\nname = \"Zoë Ørsted-Łukasz\"\n", file: "pacer.toml").wearerName == "Zoë Ørsted-Łukasz")
        for (value, problem) in [
            ("\"Anna\u{202E}evil\"", "pacer.toml:2: profile.name: expected a name of plain characters, got one with an invisible or control character (U+202E)"),
            ("\"Anna\\tRossi\"", "pacer.toml:2: profile.name: expected a name of plain characters, got one with an invisible or control character (U+0009)"),
            ("\"Anna\u{200B}Rossi\"", "(U+200B)"),
            ("\"" + String(repeating: "a", count: 65) + "\"", "pacer.toml:2: profile.name: expected a name of at most 64 characters, got 65"),
            ("12", "pacer.toml:2: profile.name: expected a name in quotes"),
        ] {
            #expect(throws: ConfigError.self) { try PacerConfiguration.parse("[profile]\nname = \(value)\n", file: "pacer.toml") }
            do {
                _ = try PacerConfiguration.parse("[profile]\nname = \(value)\n", file: "pacer.toml")
            } catch {
                #expect(error.description.contains(problem), "\(error.description)")
            }
        }
    }

    @Test func heartRateSection() throws {
        let config = try PacerConfiguration.parse("""
            [hr]
            strap = "c8:4f:0e:12:34:56"
            backup_strap = "AA:BB:CC:DD:EE:01"
            adapter = "hci1"
            """, file: "pacer.toml")
        #expect(config.heartRateStrap == "C8:4F:0E:12:34:56")
        #expect(config.heartRateBackupStrap == "AA:BB:CC:DD:EE:01")
        #expect(config.bluetoothAdapter == "hci1")
        for (text, problem) in [
            ("strap = \"C8:4F:0E:12:34\"", "expected a Bluetooth address"),
            ("strap = \"C8-4F-0E-12-34-56\"", "expected a Bluetooth address"),
            ("strap = 12", "expected a Bluetooth address in quotes"),
            ("adapter = \"usb0\"", "expected an adapter name"),
        ] {
            do {
                _ = try PacerConfiguration.parse("[hr]\n\(text)\n", file: "pacer.toml")
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.line == 2)
                #expect(error.problem.hasPrefix(problem), "\(error.problem)")
            }
        }
    }

    @Test func daemonSections() throws {
        let config = try PacerConfiguration.parse("""
            [gps]
            host = "127.0.0.1"
            port = 2948
            [control]
            socket = "/tmp/x.sock"
            group = "runners"
            [profile]
            age = 50
            [buttons]
            device = "/dev/input/by-path/platform-gpio-keys-event"
            keys = [256]
            [run]
            auto_start = true
            """, file: "f")
        #expect(config.gpsHost == "127.0.0.1")
        #expect(config.gpsPort == 2948)
        #expect(config.controlSocket == "/tmp/x.sock")
        #expect(config.controlGroup == "runners")
        #expect(config.maxHeartRate == 173)  // 208 - 0.7 * 50
        #expect(config.buttonDevice == "/dev/input/by-path/platform-gpio-keys-event")
        #expect(config.buttonKeyCodes == [256])
        #expect(config.autoStart)
        #expect(try PacerConfiguration.parse("[profile]\nmax_hr_bpm = 181\n", file: "f").maxHeartRate == 181)
    }
}
