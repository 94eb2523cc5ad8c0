import Foundation

/// Small receiver logs for gpsfake, made on the spot, so tests of the gpsd plumbing do not need
/// the shared data.
public enum NMEALog {
    /// One RMC and one GGA sentence per second: a 3D fix walking north at about 1.2 m/s from
    /// 45.4779 N 9.2241 E, starting 2026-05-10 07:30:00 UTC. The TPV times gpsd makes of it are
    /// `epochTimes(seconds:)`.
    public static func walking(seconds: Int) -> String {
        var text = ""
        for second in 0..<seconds {
            let total = 7 * 3600 + 30 * 60 + second
            let time = String(format: "%02d%02d%02d.00", total / 3600, total / 60 % 60, total % 60)
            let minutes = 28.672850 + Double(second) * 0.00065  // 1.2 m/s ≈ 0.00065' of latitude
            let latitude = String(format: "45%09.6f", minutes)
            text += sentence("GPRMC,\(time),A,\(latitude),N,00913.444688,E,2.333,0.0,100526,,,A") + "\r\n"
            text += sentence("GPGGA,\(time),\(latitude),N,00913.444688,E,1,09,0.9,122.1,M,47.0,M,,") + "\r\n"
        }
        return text
    }

    /// The ISO-8601 times of `walking(seconds:)`'s epochs, as gpsd writes them in TPVs.
    public static func epochTimes(seconds: Int) -> [String] {
        (0..<seconds).map { second in
            let total = 7 * 3600 + 30 * 60 + second
            return String(format: "2026-05-10T%02d:%02d:%02d.000Z", total / 3600, total / 60 % 60, total % 60)
        }
    }

    /// `$body*XX` with the NMEA checksum (XOR of the bytes between `$` and `*`).
    public static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return "$" + body + String(format: "*%02X", checksum)
    }

    /// Writes `text` to `path`.
    public static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(filePath: path))
    }
}
