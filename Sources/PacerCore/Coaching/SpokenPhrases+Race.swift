/// What a runner hears in a race (issue #34): the distance to go, off course, the result, the place.
extension SpokenPhrases {
    /// A cue point: "5 kilometres to go.", "500 metres to go.", "3 miles to go.", "Half a mile to go.".
    public func toGo(_ meters: Double) -> String {
        if units == .imperial, abs(meters - Self.metresPerMile / 2) < 1 { return "Half a mile to go." }
        return "\(distance(meters)) to go."
    }

    /// "Off course: 60 metres from the route."
    public func offCourse(_ meters: Double) -> String { "Off course: \(distance(meters)) from the route." }

    public var backOnCourse: String { "Back on course." }

    /// "Finished. Gun time 42 minutes 10 seconds, net time 41 minutes 58 seconds." Gun time is the
    /// official result, so it comes first; without an official start only the runner's own time.
    public func finished(gunSeconds: Double?, netSeconds: Double) -> String {
        guard let gunSeconds else { return "Finished in \(raceTime(netSeconds))." }
        return "Finished. Gun time \(raceTime(gunSeconds)), net time \(raceTime(netSeconds))."
    }

    /// "You are 12th.", "You are 3rd of 250." (the place the cloud sends).
    public func place(_ place: Int, of runners: Int? = nil) -> String {
        guard let runners else { return "You are \(ordinal(place))." }
        return "You are \(ordinal(place)) of \(runners)."
    }

    /// A race time to the second, however long: "3 hours 44 minutes 8 seconds", "1 hour 5 seconds".
    /// (`duration` leaves the seconds out past an hour; a result needs them.)
    public func raceTime(_ seconds: Double) -> String {
        let total = max(0, Int(seconds.rounded()))
        let hours = total / 3600, minutes = total % 3600 / 60, secs = total % 60
        var parts: [String] = []
        if hours > 0 { parts.append(plural(hours, "hour")) }
        if minutes > 0 { parts.append(plural(minutes, "minute")) }
        if secs > 0 || parts.isEmpty { parts.append(plural(secs, "second")) }
        return parts.joined(separator: " ")
    }

    /// 1 → "1st", 2 → "2nd", 3 → "3rd", 11 → "11th", 22 → "22nd", 113 → "113th".
    public func ordinal(_ n: Int) -> String {
        let suffix = switch (n % 100, n % 10) {
        case (11...13, _): "th"
        case (_, 1): "st"
        case (_, 2): "nd"
        case (_, 3): "rd"
        default: "th"
        }
        return "\(n)\(suffix)"
    }
}
