/// One SOS message (openapi.yaml `AlertMessage`): what pacerd POSTs to `{upload.url}/v1/alerts`
/// and gives the hook on standard input, and what the cloud stores and forwards. A public
/// interface (README "SOS"): change it only on purpose. The server de-duplicates by
/// (`alert_id`, `sequence`). Field names are the JSON keys; optional fields are left out when nil.
public struct AlertBody: Codable, Equatable, Sendable {
    public struct HeartRate: Codable, Equatable, Sendable {
        public var bpm: Int?
        public var trend: String?
        public var trend_bpm_per_min: Double?
        public var min_30s: Int?
        public var max_30s: Int?
        public var threshold_bpm: Int?

        public init(bpm: Int?, trend: String?, trend_bpm_per_min: Double?, min_30s: Int?, max_30s: Int?, threshold_bpm: Int?) {
            self.bpm = bpm
            self.trend = trend
            self.trend_bpm_per_min = trend_bpm_per_min
            self.min_30s = min_30s
            self.max_30s = max_30s
            self.threshold_bpm = threshold_bpm
        }
    }

    public struct Position: Codable, Equatable, Sendable {
        public var lat: Double
        public var lon: Double
        public var time: String?
        public var age_s: Double?
        public var accuracy_m: Double?

        public init(lat: Double, lon: Double, time: String?, age_s: Double?, accuracy_m: Double?) {
            self.lat = lat
            self.lon = lon
            self.time = time
            self.age_s = age_s
            self.accuracy_m = accuracy_m
        }
    }

    /// A message's `type`: the alert (sequence 0), its follow-ups, the all clear or the cancel.
    public static let types = ["alert", "follow_up", "resolved", "cancelled"]

    public var alert_id: String
    public var sequence: Int
    public var type: String
    public var test: Bool
    /// `^[a-z][a-z0-9_]{0,39}$` (`isKind`): a newer device's kind still reaches an older server.
    public var kind: String
    /// Any text (a device's clock may never have been set); an ISO-8601 time is shown as a time.
    public var time: String
    public var raised_at: String?
    public var first_out_of_range: String?
    public var device: String?
    public var run_id: String?
    public var heart_rate: HeartRate?
    public var position: Position?
    public var battery_percent: Int?
    public var sms: String?
    /// Who wears the device (`[profile] name`): plain text of at most `WearerName.maxLength`
    /// (64) Unicode scalars. Optional: devices before it send none, and the cloud prefers the
    /// account's display name where the device is linked to an account.
    public var wearer: String?

    public init(alert_id: String, sequence: Int, type: String, test: Bool, kind: String, time: String, raised_at: String?,
                first_out_of_range: String?, device: String?, run_id: String?, heart_rate: HeartRate?, position: Position?,
                battery_percent: Int?, sms: String?, wearer: String? = nil) {
        self.alert_id = alert_id
        self.sequence = sequence
        self.type = type
        self.test = test
        self.kind = kind
        self.time = time
        self.raised_at = raised_at
        self.first_out_of_range = first_out_of_range
        self.device = device
        self.run_id = run_id
        self.heart_rate = heart_rate
        self.position = position
        self.battery_percent = battery_percent
        self.sms = sms
        self.wearer = wearer
    }

    /// `^[a-z][a-z0-9_]{0,39}$`.
    public static func isKind(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...40).contains(bytes.count), (0x61...0x7A).contains(bytes[0]) else { return false }
        return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }
}
