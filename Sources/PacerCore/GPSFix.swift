/// One position report as gpsd delivers it (a TPV), already decoded and with NaN turned into nil.
/// The core decides whether it is usable; adapters only translate.
public struct GPSFix: Sendable, Equatable {
    public enum Mode: Int, Sendable {
        case notSeen = 0, noFix = 1, twoD = 2, threeD = 3
    }

    /// gpsd's `status`. gpsd 3.22 leaves it 0 ("unknown") when the TPV has no `status` key,
    /// which is the usual case, so `.unknown` must not be read as "no fix".
    public enum Status: Int, Sendable {
        case unknown = 0, gps = 1, dgps = 2, rtkFixed = 3, rtkFloat = 4
        case deadReckoning = 5, gnssDeadReckoning = 6, timeOnly = 7, simulated = 8, pps = 9
    }

    /// nil when the TPV carried no usable time (GGA-only receivers, or gpsd's time 0).
    public var time: Timestamp?
    public var mode: Mode
    public var status: Status
    public var latitude: Double?
    public var longitude: Double?
    /// Height above the WGS84 ellipsoid, metres.
    public var altitude: Double?
    /// Speed over ground, m/s. Doppler-derived when the receiver reports it, otherwise gpsd's
    /// own position difference (see `track`).
    public var speed: Double?
    /// Course over ground, degrees true. gpsd 3.22 leaves it unset when the receiver reports no
    /// speed/course and gpsd derived `speed` itself, so it tells a Doppler speed from a derived one.
    public var track: Double?
    /// gpsd's horizontal error estimate, metres. Coarse: ~15-21 m for good HDOP-1 fixes, ~1900 m
    /// for the first fix after an outage.
    public var eph: Double?
    /// gpsd's speed error estimate, m/s.
    public var eps: Double?

    public init(
        time: Timestamp?, mode: Mode, status: Status = .unknown,
        latitude: Double?, longitude: Double?, altitude: Double? = nil,
        speed: Double? = nil, track: Double? = nil, eph: Double? = nil, eps: Double? = nil
    ) {
        self.time = time
        self.mode = mode
        self.status = status
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
        self.track = track
        self.eph = eph
        self.eps = eps
    }
}
