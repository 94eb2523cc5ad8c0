import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct SpokenPhrasesTests {
    let metric = SpokenPhrases(units: .metric)
    let imperial = SpokenPhrases(units: .imperial)

    @Test(arguments: [
        (312.0, "5 minutes 12 seconds per kilometre"),
        (300, "5 minutes per kilometre"),
        (301, "5 minutes 1 second per kilometre"),
        (61, "1 minute 1 second per kilometre"),
        (60, "1 minute per kilometre"),
        (119.6, "2 minutes per kilometre"),   // rounded to the second, then split: never "1 minute 60 seconds"
        (312.4, "5 minutes 12 seconds per kilometre"),
        (659, "10 minutes 59 seconds per kilometre"),
    ])
    func paceMetric(_ seconds: Double, _ expected: String) {
        #expect(metric.pace(secondsPerKm: seconds) == expected)
    }

    @Test(arguments: [
        (300.0, "8 minutes 3 seconds per mile"),       // 482.8 s per mile
        (360 / 1.609344, "6 minutes per mile"),
        (372.82, "10 minutes per mile"),               // 600.0 s per mile
        (186.4, "5 minutes per mile"),                 // 299.98 s per mile
        (37.9, "1 minute 1 second per mile"),          // 60.99 s per mile
    ])
    func paceImperial(_ secondsPerKm: Double, _ expected: String) {
        #expect(imperial.pace(secondsPerKm: secondsPerKm) == expected)
    }

    @Test func targetPaceIsTheCoachsShortForm() {
        #expect(metric.targetPace(secondsPerKm: 200) == "3 minutes 20 per kilometre")
        #expect(metric.targetPace(secondsPerKm: 330) == "5 minutes 30 per kilometre")
        #expect(metric.targetPace(secondsPerKm: 240) == "4 minutes per kilometre")
        #expect(metric.targetPace(secondsPerKm: 60) == "1 minute per kilometre")
        #expect(metric.targetPace(secondsPerKm: 61) == "1 minute 1 per kilometre")
        #expect(metric.targetPace(secondsPerKm: 239.6) == "4 minutes per kilometre")
        #expect(imperial.targetPace(secondsPerKm: 200) == "5 minutes 22 per mile")  // 321.9 s per mile
    }

    @Test(arguments: [
        (400.0, "400 metres"),
        (10, "10 metres"),
        (0, "0 metres"),
        (404, "400 metres"),
        (406, "410 metres"),
        (10_240, "10.2 kilometres"),
        (10_250, "10.3 kilometres"),
        (1000, "1 kilometre"),
        (1049, "1 kilometre"),
        (1050, "1.1 kilometres"),
        (1500, "1.5 kilometres"),
        (5000, "5 kilometres"),
        (9960, "10 kilometres"),
        (42_195, "42.2 kilometres"),
    ])
    func distanceMetric(_ meters: Double, _ expected: String) {
        #expect(metric.distance(meters) == expected)
    }

    /// 995–999 m rounds to the nearest 10 m, which is 1000: that is a kilometre, and it is said
    /// "1 kilometre" everywhere else (1000–1049 m).
    @Test(arguments: [995.0, 997, 999.4])
    func justUnderAKilometreIsOneKilometre(_ meters: Double) {
        #expect(metric.distance(meters) == "1 kilometre")
    }

    @Test(arguments: [
        (1609.344, "1 mile"),
        (3218.688, "2 miles"),
        (10_000, "6.2 miles"),
        (5000, "3.1 miles"),
        (500, "0.3 miles"),
        (42_195, "26.2 miles"),
        (100, "110 yards"),       // 109.4 yd, under a tenth of a mile
        (50, "50 yards"),         // 54.7 yd
        (0, "0 yards"),
    ])
    func distanceImperial(_ meters: Double, _ expected: String) {
        #expect(imperial.distance(meters) == expected)
    }

    @Test func stepDistanceSaysTheStepAsSet() {
        #expect(metric.stepDistance(400) == "400 metres")
        #expect(metric.stepDistance(200) == "200 metres")
        #expect(metric.stepDistance(1000) == "1 kilometre")
        #expect(metric.stepDistance(1500) == "1.5 kilometres")
        #expect(imperial.stepDistance(1609.344) == "1 mile")
    }

    @Test(arguments: [
        (3723.0, "1 hour 2 minutes"),
        (3600, "1 hour"),
        (3660, "1 hour 1 minute"),
        (7260, "2 hours 1 minute"),
        (7200, "2 hours"),
        (3599.6, "1 hour"),
        (59.6, "1 minute"),
        (60, "1 minute"),
        (61, "1 minute 1 second"),
        (62, "1 minute 2 seconds"),
        (125, "2 minutes 5 seconds"),
        (1, "1 second"),
        (45, "45 seconds"),
        (0, "0 seconds"),
        (0.4, "0 seconds"),
        (-3, "0 seconds"),
        (1500, "25 minutes"),
    ])
    func duration(_ seconds: Double, _ expected: String) {
        #expect(metric.duration(seconds) == expected)
        #expect(imperial.duration(seconds) == expected)
    }

    @Test func heartRate() {
        #expect(metric.heartRate(148) == "heart rate 148")
    }

    /// Whatever the number, what is spoken is words and digits, never a clock or an abbreviation,
    /// and "1" always takes the singular.
    @Test func neverAClockNeverAnAbbreviationAlwaysTheRightNumber() {
        for units in [CoachConfiguration.Units.metric, .imperial] {
            let phrases = SpokenPhrases(units: units)
            var texts: [String] = []
            for tenth in stride(from: 0, through: 80_000, by: 61) {
                let s = Double(tenth) / 10
                let duration = phrases.duration(s)
                #expect(!duration.contains(/(^|\D)60 minutes/), "\(duration)")
                texts.append(duration)
                if s >= 30 { texts += [phrases.pace(secondsPerKm: s), phrases.targetPace(secondsPerKm: s)] }
                texts.append(phrases.distance(s * 6.1))
            }
            for text in texts {
                #expect(isSpeakable(text), "\(text)")
                #expect(!text.contains(/(^|[^\d.])1 \w+s\b/), "singular after 1: \(text)")
                #expect(!text.contains(/(^|[^\d.])([02-9]|\d\d+) (hour|minute|second|metre|kilometre|mile|yard)\b/),
                        "plural after anything but 1: \(text)")
                #expect(!text.contains(".0 ") && !text.contains(/(^|\D)60 seconds/), "\(text)")
            }
        }
    }
}
