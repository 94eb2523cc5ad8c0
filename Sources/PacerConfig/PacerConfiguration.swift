import PacerCore

/// Pacer's configuration (`/etc/pacer/pacer.toml`). Every key is optional; defaults are in the
/// property initialisers and documented in config/pacer.toml.
public struct PacerConfiguration: Sendable, Equatable {
    public enum UnitSystem: String, Sendable, Equatable {
        case metric, imperial
    }

    public var units: UnitSystem = .metric
    public var tracking = TrackerConfiguration()
    /// Where runs are stored.
    public var databasePath = "/var/lib/pacer/pacer.db"
    /// Raw gpsd lines of uploaded runs are removed after this many days (nil: kept for ever).
    public var keepRawDays: Int? = 30
    /// Time zone for weekly/monthly/yearly totals and goals (nil: the system's).
    public var timeZone: String?

    public init() {}

    /// Parses a config file's text. `file` is only used in error messages.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> PacerConfiguration {
        var config = PacerConfiguration()
        var splitDistanceSet = false
        for entry in try TOMLSubset.parse(text, file: file) {
            func fail(_ problem: String) -> ConfigError {
                ConfigError(file: file, line: entry.line, key: entry.key, problem: problem)
            }
            func number(in range: ClosedRange<Double>, _ what: String) throws(ConfigError) -> Double {
                guard case .number(let n) = entry.value else {
                    throw fail("expected \(what), got \(entry.value.typeName)")
                }
                guard range.contains(n) else { throw fail("expected \(what), got \(n)") }
                return n
            }
            switch entry.key {
            case "units.system":
                guard case .string(let s) = entry.value, let system = UnitSystem(rawValue: s) else {
                    throw fail("expected \"metric\" or \"imperial\"")
                }
                config.units = system
            case "tracking.split_distance_m":
                config.tracking.splitDistanceMeters = try number(in: 100...100_000, "a distance in metres from 100 to 100000")
                splitDistanceSet = true
            case "tracking.resume_above_mps":
                config.tracking.resumeAboveSpeed = try number(in: 0.1...5, "a speed in m/s from 0.1 to 5")
            case "tracking.pause_below_mps":
                config.tracking.pauseBelowSpeed = try number(in: 0.05...5, "a speed in m/s from 0.05 to 5")
            case "storage.database":
                guard case .string(let path) = entry.value, path.hasPrefix("/") else { throw fail("expected an absolute path in quotes") }
                config.databasePath = path
            case "storage.keep_raw_days":
                let days = try number(in: 0...36_500, "a number of days from 0 to 36500, or 0 to keep them for ever")
                guard days == days.rounded() else { throw fail("expected a whole number of days, got \(days)") }
                config.keepRawDays = days == 0 ? nil : Int(days)
            case "history.time_zone":
                guard case .string(let zone) = entry.value else { throw fail("expected a zone name in quotes, e.g. \"Europe/Rome\"") }
                config.timeZone = zone.isEmpty ? nil : zone
            case "tracking.gps_lost_after_s":
                config.tracking.gpsLostAfterSeconds = try number(in: 2...120, "seconds from 2 to 120")
            default:
                throw fail("unknown key (check its spelling and section)")
            }
            if config.tracking.pauseBelowSpeed >= config.tracking.resumeAboveSpeed {
                throw fail("tracking.pause_below_mps must be lower than tracking.resume_above_mps")
            }
        }
        if config.units == .imperial && !splitDistanceSet {
            config.tracking.splitDistanceMeters = 1609.344
        }
        return config
    }
}
