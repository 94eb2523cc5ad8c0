import PacerCore

/// One line of gpsd's JSON protocol, decoded by libgps and reduced to what Pacer uses.
public enum GPSMessage: Sendable, Equatable {
    /// A TPV report.
    case fix(GPSFix)
    /// A SKY report.
    case sky(SkyReport)
    /// gpsd's greeting; `release` is e.g. "3.22".
    case version(release: String)
    /// Any other class (DEVICE, DEVICES, WATCH, GST, …), including ones libgps does not know.
    /// Pacer reads nothing from these, so only their framing is checked, not libgps' verdict.
    case other(className: String)
    /// gpsd's ERROR class: it rejected something the client sent.
    case gpsdError(message: String)
}
