/// Where "N to go" is said: every 5 km to go while more than 5 km remain, every kilometre over
/// the last 5, and 500 m before the arrival (in miles: every 5 miles, every mile over the last 5,
/// half a mile). A marathon is 13 cues, a 10 km 6: enough to pace the end of a race, not so
/// many that they talk over the coach's own per-kilometre summary. None within 100 m of the
/// start: nobody needs telling the whole distance at the line.
public enum RaceCuePoints {
    /// Metres to go, farthest first.
    public static func marks(courseLength: Double, units: CoachConfiguration.Units) -> [Double] {
        let unit = units == .metric ? 1000.0 : SpokenPhrases.metresPerMile
        var marks: [Double] = []
        var fives = Int((courseLength / unit / 5).rounded(.down))
        while fives >= 2 {
            marks.append(Double(fives * 5) * unit)
            fives -= 1
        }
        for n in stride(from: 5, through: 1, by: -1) { marks.append(Double(n) * unit) }
        marks.append(unit / 2)
        return marks.filter { $0 < courseLength - 100 }
    }
}
