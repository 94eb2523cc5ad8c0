/// Numbers as a person says them: "5 minutes 12 seconds per kilometre", "10.2 kilometres",
/// never "5:12/km". Metric or imperial. English only for now (R-VOICE-3).
public struct SpokenPhrases: Sendable, Equatable {
    public var units: CoachConfiguration.Units

    public init(units: CoachConfiguration.Units) {
        self.units = units
    }

    static let metresPerMile = 1609.344

    /// 400 → "400 metres"; 10_240 → "10.2 kilometres"; imperial: "6.4 miles", "0.3 miles".
    public func distance(_ meters: Double) -> String {
        switch units {
        case .metric:
            // Rounded to 10 m first, so 996 m is "1 kilometre", not "1000 metres".
            let tens = Int((meters / 10).rounded()) * 10
            if tens < 1000 { return plural(tens, "metre") }
            return decimal(meters / 1000, "kilometre")
        case .imperial:
            let miles = meters / Self.metresPerMile
            if miles < 0.1 { return plural(Int((meters / 0.9144 / 10).rounded()) * 10, "yard") }
            return decimal(miles, "mile")
        }
    }

    /// A whole step length as set in a workout: "400 metres", "1 kilometre", "1.5 kilometres".
    public func stepDistance(_ meters: Double) -> String {
        distance(meters)
    }

    /// 723 → "12 minutes 3 seconds"; 59.6 → "1 minute"; past an hour the seconds are left out
    /// (3723 → "1 hour 2 minutes"): nobody needs them read out then.
    public func duration(_ seconds: Double) -> String {
        let total = max(0, Int(seconds.rounded()))
        let hours = total / 3600, minutes = total % 3600 / 60, secs = total % 60
        var parts: [String] = []
        if hours > 0 { parts.append(plural(hours, "hour")) }
        if minutes > 0 { parts.append(plural(minutes, "minute")) }
        if secs > 0 && hours == 0 { parts.append(plural(secs, "second")) }
        return parts.isEmpty ? "0 seconds" : parts.joined(separator: " ")
    }

    /// Seconds per kilometre → "5 minutes 12 seconds per kilometre" (per mile when imperial).
    public func pace(secondsPerKm: Double) -> String {
        let (minutes, seconds, unit) = paceParts(secondsPerKm)
        let time = seconds == 0 ? plural(minutes, "minute") : "\(plural(minutes, "minute")) \(plural(seconds, "second"))"
        return "\(time) per \(unit)"
    }

    /// The short form a coach uses in a step announcement: "3 minutes 20 per kilometre".
    public func targetPace(secondsPerKm: Double) -> String {
        let (minutes, seconds, unit) = paceParts(secondsPerKm)
        return seconds == 0 ? "\(plural(minutes, "minute")) per \(unit)" : "\(plural(minutes, "minute")) \(seconds) per \(unit)"
    }

    /// Whole minutes and seconds per kilometre or per mile, and the unit's name.
    private func paceParts(_ secondsPerKm: Double) -> (minutes: Int, seconds: Int, unit: String) {
        let perUnit = units == .metric ? secondsPerKm : secondsPerKm * Self.metresPerMile / 1000
        let total = Int(perUnit.rounded())
        return (total / 60, total % 60, units == .metric ? "kilometre" : "mile")
    }

    public func heartRate(_ bpm: Int) -> String { "heart rate \(bpm)" }

    func plural(_ n: Int, _ word: String) -> String { n == 1 ? "1 \(word)" : "\(n) \(word)s" }

    /// One decimal, spoken without a trailing ".0": "10.2 kilometres", "5 kilometres", "1 mile".
    func decimal(_ value: Double, _ word: String) -> String {
        let tenths = Int((value * 10).rounded())
        if tenths % 10 == 0 { return plural(tenths / 10, word) }
        return "\(tenths / 10).\(tenths % 10) \(word)s"
    }
}
