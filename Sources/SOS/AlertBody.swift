import FoundationEssentials
import PacerCore

/// The JSON of one alert message: POSTed to `{upload.url}/v1/alerts` and given to the hook on
/// standard input. A public interface (README "SOS"): change it only on purpose. The server
/// de-duplicates by (`alert_id`, `sequence`).
struct AlertBody: Encodable {
    struct HeartRate: Encodable {
        var bpm: Int?
        var trend: String?
        var trend_bpm_per_min: Double?
        var min_30s: Int?
        var max_30s: Int?
        var threshold_bpm: Int?
    }

    struct Position: Encodable {
        var lat: Double
        var lon: Double
        var time: String?
        var age_s: Double?
        var accuracy_m: Double?
    }

    var alert_id: String
    var sequence: Int
    var type: String
    var test: Bool
    var kind: String
    var time: String
    var raised_at: String
    var first_out_of_range: String?
    var device: String
    var run_id: String?
    var heart_rate: HeartRate?
    var position: Position?
    var battery_percent: Int?
    var sms: String

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings and numbers cannot fail; an empty object is still valid JSON.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
