import FoundationEssentials
import PacerCore

/// The runner's lap, pause and resume as a line of the run's raw gpsd log, e.g.
/// `{"class":"PACER","control":"lap","time":"2026-05-10T07:41:12.250Z"}`. gpsd never sends this
/// class, and libgps reads it as an unknown class, so the raw log stays a valid gpsd JSON stream
/// and a replay applies the control at exactly the place the daemon did. `time` (on the run's
/// timebase, when known) is for people reading the log; the replay goes by position.
public enum ControlLine {
    public static let className = "PACER"

    public static func line(_ control: RunControl, time: Timestamp?) -> String {
        var text = #"{"class":"\#(className)","control":"\#(control.rawValue)""#
        if let time { text += #","time":"\#(time.iso8601)""# }
        return text + "}"
    }

    private struct Fields: Decodable {
        var control: String
    }

    public static func parse(_ line: some Collection<UInt8>) -> RunControl? {
        guard let fields = try? JSONDecoder().decode(Fields.self, from: Data(line)) else { return nil }
        return RunControl(rawValue: fields.control)
    }
}
