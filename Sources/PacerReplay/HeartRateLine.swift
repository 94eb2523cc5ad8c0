import FoundationEssentials
import PacerCore

/// A heart-rate strap notification (BLE 0x2A37) as a line of the run's raw gpsd log, e.g.
/// `{"class":"HRM","time":"2026-05-10T07:41:12.250Z","hex":"16485401EC02"}`. Like ControlLine's
/// PACER class, gpsd never sends it and libgps reads it as an unknown class, so the raw log stays a
/// valid gpsd JSON stream. `time` is the arrival time on the daemon's timebase and is what a
/// replay goes by (not the line's position); `hex` is the value exactly as received, so a replay
/// decodes it with the same decoder the daemon used.
public enum HeartRateLine {
    public static let className = "HRM"

    public static func line(_ bytes: some Collection<UInt8>, time: Timestamp) -> String {
        #"{"class":"\#(className)","time":"\#(time.iso8601)","hex":"\#(HexBytes.string(bytes))"}"#
    }

    private struct Fields: Decodable {
        var `class`: String
        var time: String
        var hex: String
    }

    /// The arrival time and the value's bytes; nil unless the line is an HRM line with an ISO-8601
    /// UTC time and hex bytes (the bytes themselves may still be a malformed measurement).
    public static func parse(_ line: some Collection<UInt8>) -> (time: Timestamp, bytes: [UInt8])? {
        guard let fields = try? JSONDecoder().decode(Fields.self, from: Data(line)),
            fields.class == className,
            let time = Timestamp(iso8601: fields.time),
            case .success(let bytes) = HexBytes.parse(fields.hex)
        else { return nil }
        return (time, bytes)
    }

    public static func parse(_ line: some StringProtocol) -> (time: Timestamp, bytes: [UInt8])? {
        parse(Array(line.utf8))
    }
}
