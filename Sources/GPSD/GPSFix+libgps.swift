internal import CGPS
import PacerCore

extension GPSFix {
    /// Translates libgps' fix: NaN becomes nil, a zero time becomes nil, unknown codes fall back.
    init(libgps fix: UnsafePointer<gps_fix_t>) {
        let f = fix.pointee
        self.init(
            time: Timestamp(libgps: f.time),
            mode: Mode(rawValue: Int(f.mode)) ?? .notSeen,
            status: Status(rawValue: Int(f.status)) ?? .unknown,
            latitude: f.latitude.finite,
            longitude: f.longitude.finite,
            // Above mean sea level (the geoid), as maps and other devices give elevation; HAE when the receiver says no MSL.
            altitude: f.altMSL.finite ?? f.altHAE.finite,
            speed: f.speed.finite,
            track: f.track.finite,
            eph: f.eph.finite,
            eps: f.eps.finite
        )
    }
}

extension Timestamp {
    /// libgps writes {0, 0} when a report has no `time`. gpsd sends milliseconds; anything finer
    /// (another gpsd, a hand-made log) is rounded to the nearest one.
    init?(libgps ts: timespec) {
        guard ts.tv_sec != 0 || ts.tv_nsec != 0 else { return nil }
        let (ms, overflow) = Int64(ts.tv_sec).multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        self.init(milliseconds: ms + (Int64(ts.tv_nsec) + 500_000) / 1_000_000)
    }
}

extension Double {
    /// libgps marks "not reported" with NaN.
    var finite: Double? { isFinite ? self : nil }
}
