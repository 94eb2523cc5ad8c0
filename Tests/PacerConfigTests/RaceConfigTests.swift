import Testing
@testable import PacerConfig

/// `[race]`: the position period and the reminder, with their defaults and their ranges.
@Suite(.timeLimit(.minutes(10))) struct RaceConfigTests {
    static func error(_ text: String) -> ConfigError? {
        do { _ = try PacerConfiguration.parse(text, file: "pacer.toml") } catch { return error }
        return nil
    }

    @Test func defaultsAndKeys() throws {
        let defaults = PacerConfiguration()
        #expect(defaults.race.positionEverySeconds == 5)
        #expect(defaults.race.reminderMinutes == 15)
        let config = try PacerConfiguration.parse("[race]\nposition_every_s = 2\nreminder_min = 0\n", file: "pacer.toml")
        #expect(config.race.positionEverySeconds == 2)
        #expect(config.race.reminderMinutes == 0)
    }

    @Test func outOfRangeValuesNameFileLineAndKey() {
        let fast = Self.error("[race]\nreminder_min = 30\nposition_every_s = 0.5\n")
        #expect(fast?.description == "pacer.toml:3: race.position_every_s: expected seconds from 1 to 60, got 0.5")
        let early = Self.error("[race]\nreminder_min = 600\n")
        #expect(early?.line == 2)
        #expect(early?.key == "race.reminder_min")
        #expect(early?.problem.contains("minutes from 0 to 180") == true)
        #expect(Self.error("[race]\nreminder_min = 1.5\n")?.key == "race.reminder_min")
        #expect(Self.error("[race]\nposition_s = 5\n")?.problem.contains("unknown key") == true)
    }
}
