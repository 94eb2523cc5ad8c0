import PacerCore

/// The few parts of gpsd's SKY report that matter to a runner: dilution of precision and
/// how many satellites are seen and used.
public struct SkyReport: Sendable, Equatable {
    /// nil when the SKY carried no `time` (gpsd leaves it out for some receivers).
    public var time: Timestamp?
    public var hdop: Double?
    public var pdop: Double?
    /// Counted by libgps from the satellite list (not the `uSat`/`nSat` keys); 0 when the SKY has no list.
    public var satellitesUsed: Int
    public var satellitesSeen: Int

    public init(
        time: Timestamp?, hdop: Double?, pdop: Double?, satellitesUsed: Int, satellitesSeen: Int
    ) {
        self.time = time
        self.hdop = hdop
        self.pdop = pdop
        self.satellitesUsed = satellitesUsed
        self.satellitesSeen = satellitesSeen
    }
}
