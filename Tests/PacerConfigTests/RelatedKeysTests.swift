import Testing
@testable import PacerConfig

/// Every rule between two keys, with the pair written in both orders: whether the file is
/// accepted must not depend on the order, and a refusal names the later of the two lines.
@Suite(.timeLimit(.minutes(10))) struct RelatedKeysTests {
    static let file = "/etc/pacer/pacer.toml"

    struct Pair: Sendable, CustomTestStringConvertible {
        var section: String
        /// Two `key = value` lines that go together, and two that do not.
        var valid: (String, String)
        var invalid: (String, String)
        var problem: String
        /// The values the valid lines set, read back.
        var check: @Sendable (PacerConfiguration) -> Bool
        var testDescription: String { section + " " + valid.0.prefix { $0 != " " } }
    }

    static let pairs = [
        // Each valid pair would have been refused at its first line with the other key at its
        // default (resume 0.8 m/s, very long press 5 s), which is how the order used to matter.
        Pair(section: "tracking", valid: ("pause_below_mps = 2", "resume_above_mps = 3"),
             invalid: ("pause_below_mps = 0.3", "resume_above_mps = 0.3"), problem: "must be lower than tracking.resume_above_mps",
             check: { $0.tracking.pauseBelowSpeed == 2 && $0.tracking.resumeAboveSpeed == 3 }),
        Pair(section: "buttons", valid: ("long_press_s = 6", "very_long_press_s = 12"),
             invalid: ("long_press_s = 6", "very_long_press_s = 4"), problem: "must be shorter than buttons.very_long_press_s",
             check: { $0.longPressSeconds == 6 && $0.veryLongPressSeconds == 12 }),
        Pair(section: "sos", valid: ("hr_high_bpm = 101", "hr_low_bpm = 80"),
             invalid: ("hr_high_bpm = 100", "hr_low_bpm = 80"), problem: "must be at least 20 bpm above sos.hr_low_bpm",
             check: { $0.sos.rules.highBpm == 101 && $0.sos.rules.lowBpm == 80 }),
        // Issue 17: 5 samples at 1 Hz need 4 s, so a 3 s window could never confirm with them.
        Pair(section: "sos", valid: ("confirm_window_s = 4", "confirm_samples = 5"),
             invalid: ("confirm_window_s = 3", "confirm_samples = 5"), problem: "could never confirm a breach within the 5 s deadline",
             check: { $0.sos.rules.confirmWindowSeconds == 4 && $0.sos.rules.confirmSamples == 5 }),
        Pair(section: "upload", valid: ("url = \"http://127.0.0.1:8080\"", "allow_http = true"),
             invalid: ("url = \"http://127.0.0.1:8080\"", "allow_http = false"), problem: "only allowed to a loopback address",
             check: { $0.upload.url == "http://127.0.0.1:8080" && $0.upload.allowPlainHTTP }),
    ]

    /// The pair in the given order, with a comment between and other sections around, so that
    /// the later line is neither the second line nor the last one.
    static func text(_ section: String, _ first: String, _ second: String) -> String {
        "[units]\nsystem = \"metric\"\n[\(section)]\n\(first)\n# between\n\(second)\n[gps]\nport = 2947\n"
    }

    static let laterLine = 6

    @Test(arguments: pairs)
    func acceptedInEitherOrder(_ pair: Pair) throws {
        for (first, second) in [(pair.valid.0, pair.valid.1), (pair.valid.1, pair.valid.0)] {
            let config = try PacerConfiguration.parse(Self.text(pair.section, first, second), file: Self.file)
            #expect(pair.check(config), "\(first) then \(second)")
        }
    }

    @Test(arguments: pairs)
    func refusedInEitherOrderAtTheLaterLine(_ pair: Pair) {
        for (first, second) in [(pair.invalid.0, pair.invalid.1), (pair.invalid.1, pair.invalid.0)] {
            let laterKey = "\(pair.section).\(second.prefix { $0 != " " })"
            do {
                _ = try PacerConfiguration.parse(Self.text(pair.section, first, second), file: Self.file)
                Issue.record("accepted \(first) then \(second)")
            } catch {
                #expect(error.line == Self.laterLine, "\(first) then \(second)")
                #expect(error.key == laterKey, "\(first) then \(second)")
                #expect(error.problem.contains(pair.problem), "\(error.problem)")
                #expect(error.description.hasPrefix("\(Self.file):\(Self.laterLine): \(laterKey): "))
            }
        }
    }

    /// Two broken pairs: the one blamed earlier in the file is reported, whichever rule it is.
    @Test func theEarliestBlamedLineIsReported() {
        for (text, line, key) in [
            ("[tracking]\npause_below_mps = 1\n[buttons]\nlong_press_s = 6\n", 2, "tracking.pause_below_mps"),
            ("[buttons]\nlong_press_s = 6\n[tracking]\npause_below_mps = 1\n", 2, "buttons.long_press_s"),
        ] {
            do {
                _ = try PacerConfiguration.parse(text, file: Self.file)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.line == line && error.key == key, "\(error)")
            }
        }
    }

    /// http:// to any other host is wrong whatever allow_http says: its own line, in either order.
    @Test func plainHTTPToAnotherHostIsBlamedOnTheURL() {
        for text in ["[upload]\nurl = \"http://cloud.example.org\"\nallow_http = true\n",
                     "[upload]\nallow_http = true\nurl = \"http://cloud.example.org\"\n"] {
            do {
                _ = try PacerConfiguration.parse(text, file: Self.file)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.key == "upload.url")
                #expect(error.line == (text.hasPrefix("[upload]\nurl") ? 2 : 3))
                #expect(error.problem.contains("loopback"))
            }
        }
    }
}
