import Testing
import PacerCore
@testable import Export

@Suite(.timeLimit(.minutes(10))) struct FormattingTests {
    @Test(arguments: [
        (0.0, 7, "0.0000000"),
        (-0.0, 7, "0.0000000"),
        (-0.000_000_04, 7, "0.0000000"),
        (45.503_503_41, 7, "45.5035034"),
        (-122.084_075_6, 7, "-122.0840756"),
        (9.999_999_96, 7, "10.0000000"),
        (1.5, 0, "2"),
        (2.5, 0, "3"),
        (-2.5, 0, "-3"),
        (0.999_9, 3, "1.000"),
        (123.456, 1, "123.5"),
        (-2.25, 1, "-2.3"),
        (42_195.004_9, 2, "42195.00"),
        (10_800.25, 3, "10800.250"),
        (999_999_999_999.5, 1, "999999999999.5"),
    ])
    func fixedDecimals(value: Double, decimals: Int, text: String) {
        #expect(FixedDecimal.format(value, decimals: decimals) == text)
    }

    @Test func nonFiniteAndHugeValuesAreNotFormatted() {
        for value in [Double.nan, .infinity, -.infinity, 1e15, -1e300] {
            #expect(FixedDecimal.format(value, decimals: 2) == nil)
        }
    }

    @Test func degreesAtTheEdges() {
        #expect(ExportText.degrees(90, isLongitude: false) == "90.0000000")
        #expect(ExportText.degrees(-90, isLongitude: false) == "-90.0000000")
        #expect(ExportText.degrees(180, isLongitude: true) == "-180.0000000")
        #expect(ExportText.degrees(179.999_999_96, isLongitude: true) == "-180.0000000")
        #expect(ExportText.degrees(179.999_999_9, isLongitude: true) == "179.9999999")
        #expect(ExportText.degrees(-180, isLongitude: true) == "-180.0000000")
    }

    @Test func coordinateValidity() {
        #expect(ExportText.isValid(Coordinate(latitude: 90, longitude: -180)))
        #expect(ExportText.isValid(Coordinate(latitude: -90, longitude: 180)))
        #expect(!ExportText.isValid(Coordinate(latitude: .nan, longitude: 0)))
        #expect(!ExportText.isValid(Coordinate(latitude: 0, longitude: .infinity)))
        #expect(!ExportText.isValid(Coordinate(latitude: 90.000_001, longitude: 0)))
        #expect(!ExportText.isValid(Coordinate(latitude: 0, longitude: -180.5)))
    }

    @Test func xmlEscaping() {
        #expect(ExportText.escaped("Morning run 🏃 à Milano") == "Morning run 🏃 à Milano")
        #expect(ExportText.escaped(#"a&b<c>d"e'f"#) == "a&amp;b&lt;c&gt;d&quot;e&apos;f")
        #expect(ExportText.escaped("&amp;") == "&amp;amp;")
        #expect(ExportText.escaped("tab\tline\nreturn\r") == "tab\tline\nreturn&#13;")
        #expect(ExportText.escaped("nul\u{0}bell\u{7}esc\u{1B}\u{FFFE}") == "nul\u{FFFD}bell\u{FFFD}esc\u{FFFD}\u{FFFD}")
        #expect(ExportText.escaped("") == "")
    }

    @Test func heartRateRange() {
        #expect(ExportText.heartRate(0 as Int?) == nil)
        #expect(ExportText.heartRate(1 as Int?) == 1)
        #expect(ExportText.heartRate(254 as Int?) == 254)
        #expect(ExportText.heartRate(255 as Int?) == nil)
        #expect(ExportText.heartRate(-3 as Int?) == nil)
        #expect(ExportText.heartRate(nil as Int?) == nil)
        #expect(ExportText.heartRate(141.5 as Double?) == 142)
        #expect(ExportText.heartRate(Double.nan as Double?) == nil)
        #expect(ExportText.heartRate(254.6 as Double?) == nil)
    }
}
