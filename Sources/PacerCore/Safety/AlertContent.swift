/// Everything an alert message says, on the wall clock (the SOS lane converts from its monotonic
/// clock; replay has wall time already).
public struct AlertContent: Sendable, Equatable {
    public enum Message: String, Sendable, Equatable {
        /// The alert itself.
        case alert
        /// The newest position while it is open.
        case followUp = "follow_up"
        /// The value came back in range and stayed there.
        case resolved
        /// The runner called it off: "false alarm, I am OK".
        case cancelled
    }

    public var message: Message
    public var kind: AlertKind
    /// When the alert (or this follow-up) was raised, wall clock.
    public var time: Timestamp
    public var firstOutOfRange: Timestamp?
    public var heartRate: Int?
    /// When the heart rate shown was measured, wall clock; on a follow-up whose reading is too old
    /// to show (`heartRate` nil), when the last valid one was. Nil: the age is not said.
    public var heartRateTime: Timestamp?
    public var trend: HeartRateTrend.Direction?
    public var threshold: Int?
    public var latitude: Double?
    public var longitude: Double?
    public var positionAgeSeconds: Double?
    public var accuracyMeters: Double?
    public var device: String
    public var runID: Int64?
    public var batteryPercent: Int?
    /// A follow-up sent because pacerd restarted while the alert was open: it says so.
    public var deviceRestarted = false
    /// Who wears the device (`[profile] name`), as configured; nil: not set. Cleaned and made
    /// GSM-7 where it is written (`WearerName`).
    public var wearer: String?
    /// The wearer's time zone (`[profile] timezone`, else the system's), in which the text's
    /// times are written: an SMS's reader may be anywhere. Nil: UTC, and the text says "UTC".
    public var zone: ZoneOffsets?

    public init(message: Message, kind: AlertKind, time: Timestamp, firstOutOfRange: Timestamp? = nil, heartRate: Int? = nil,
                trend: HeartRateTrend.Direction? = nil, threshold: Int? = nil, latitude: Double? = nil, longitude: Double? = nil,
                positionAgeSeconds: Double? = nil, accuracyMeters: Double? = nil, device: String, runID: Int64? = nil,
                batteryPercent: Int? = nil, heartRateTime: Timestamp? = nil, wearer: String? = nil, zone: ZoneOffsets? = nil) {
        self.message = message
        self.kind = kind
        self.time = time
        self.firstOutOfRange = firstOutOfRange
        self.heartRate = heartRate
        self.heartRateTime = heartRateTime
        self.trend = trend
        self.threshold = threshold
        self.latitude = latitude
        self.longitude = longitude
        self.positionAgeSeconds = positionAgeSeconds
        self.accuracyMeters = accuracyMeters
        self.device = device
        self.runID = runID
        self.batteryPercent = batteryPercent
        self.wearer = wearer
        self.zone = zone
    }

    public var hasPosition: Bool { latitude != nil && longitude != nil }
}
