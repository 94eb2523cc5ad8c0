import Foundation
import PacerCore
import Testing
@testable import PacerConfig

@Suite struct PacerConfigurationTests {
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
            database = "/data/pacer.db"
            keep_raw_days = 0
            [history]
            time_zone = "Europe/Rome"
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
        BadCase(text: "[tracking]\n\nsplit_distance_m = -5\n", line: 3, key: "tracking.split_distance_m", problem: "got -5.0"),
        BadCase(text: "[tracking]\nsplit_distanse_m = 1000\n", line: 2, key: "tracking.split_distanse_m", problem: "unknown key"),
        BadCase(text: "[units]\nsystem = \"furlongs\"\n", line: 2, key: "units.system", problem: "\"metric\" or \"imperial\""),
        BadCase(text: "[tracking\n", line: 1, key: nil, problem: "malformed section header"),
        BadCase(text: "[tracking]\nsplit_distance_m = fast\n", line: 2, key: "tracking.split_distance_m", problem: "`fast` is not a number"),
        BadCase(text: "[tracking]\nsplit_distance_m = 1000 m\n", line: 2, key: "tracking.split_distance_m", problem: "unexpected text after the value"),
        BadCase(text: "[storage]\nkeep_raw_days = 1.5\n", line: 2, key: "storage.keep_raw_days", problem: "whole number"),
        BadCase(text: "[storage]\ndatabase = \"pacer.db\"\n", line: 2, key: "storage.database", problem: "absolute path"),
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
        _ = try PacerConfiguration.parse(text, file: "config/pacer.toml")
    }
}
