/// `PUT /v1/device/state` (openapi.yaml `DeviceState`): the device's heartbeat, sent every
/// minute and when its state changes. It never carries a position: a privacy zone can hide home
/// without hiding that the device is alive (`in_private_place` says only that it is in one).
/// The cloud keeps the newest per device.
public struct DeviceState: Codable, Equatable, Sendable {
    /// What `state` may be.
    public static let states = ["idle", "recording", "paused"]

    public struct HeartRate: Codable, Equatable, Sendable {
        public var bpm: Int
        /// When the strap measured it (`Time`).
        public var time: String

        public init(bpm: Int, time: String) {
            self.bpm = bpm
            self.time = time
        }
    }

    /// Heart-rate readings of one day outside runs, for the runner's health page.
    public struct DailyHeartRate: Codable, Equatable, Sendable {
        /// The local date, `YYYY-MM-DD`.
        public var date: String
        public var count: Int
        public var min_bpm: Int?
        public var resting_bpm: Int?

        public init(date: String, count: Int, min_bpm: Int?, resting_bpm: Int?) {
            self.date = date
            self.count = count
            self.min_bpm = min_bpm
            self.resting_bpm = resting_bpm
        }
    }

    /// When the device sent it (`Time`).
    public var time: String
    public var state: String
    public var battery_percent: Int?
    public var strap_battery_percent: Int?
    public var sos_monitoring: Bool
    /// The newest reading of the strap, however old.
    public var heart_rate: HeartRate?
    /// `[profile] max_hr_bpm`, when set (the zones the runner's pages use).
    public var max_hr_bpm: Int?
    public var hr_daily: [DailyHeartRate]?
    /// The device's last fix is inside one of its privacy zones (nil: no fix known). The cloud
    /// then shows monitors "in a private place" instead of a position, and forgets the last one.
    public var in_private_place: Bool?

    public init(time: String, state: String, battery_percent: Int?, strap_battery_percent: Int?, sos_monitoring: Bool,
                heart_rate: HeartRate?, max_hr_bpm: Int?, hr_daily: [DailyHeartRate]?, in_private_place: Bool? = nil) {
        self.time = time
        self.state = state
        self.battery_percent = battery_percent
        self.strap_battery_percent = strap_battery_percent
        self.sos_monitoring = sos_monitoring
        self.heart_rate = heart_rate
        self.max_hr_bpm = max_hr_bpm
        self.hr_daily = hr_daily
        self.in_private_place = in_private_place
    }

    /// At most this many days in `hr_daily`.
    public static let maxDailyEntries = 31
    /// `[profile] max_hr_bpm`'s range.
    public static let maxHeartRateRange = 100...240
}
