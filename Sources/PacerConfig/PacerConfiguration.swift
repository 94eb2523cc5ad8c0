import PacerCore

/// Pacer's configuration (`/etc/pacer/pacer.toml`). Every key is optional; defaults are in the
/// property initialisers and documented in config/pacer.toml.
public struct PacerConfiguration: Sendable, Equatable {
    public enum UnitSystem: String, Sendable, Equatable {
        case metric, imperial
    }

    public static let defaultPath = "/etc/pacer/pacer.toml"

    public var units: UnitSystem = .metric
    public var tracking = TrackerConfiguration()

    /// gpsd to read fixes from.
    public var gpsHost = "localhost"
    public var gpsPort = 2947

    /// Where runs are stored.
    public var databasePath = "/var/lib/pacer/pacer.db"
    /// Raw gpsd lines of uploaded runs are removed after this many days (nil: kept for ever).
    public var keepRawDays: Int? = 30

    /// The control socket pacerctl talks to, and the group allowed to use it.
    public var controlSocket = "/run/pacer/control.sock"
    public var controlGroup = "pacer"

    /// The runner: age and maximum heart rate feed HR zones and SOS defaults.
    public var age = 35
    /// nil: estimated from the age (Tanaka: 208 − 0.7 × age).
    public var maxHeartRateSetting: Int?
    /// Time zone for weekly/monthly/yearly totals and goals (nil: the system's).
    public var timeZone: String?

    /// Buttons: evdev device (nil: no buttons) and the key codes that act as the run button.
    public var buttonDevice: String?
    public var buttonKeyCodes: [Int] = [28, 0x100]  // KEY_ENTER, BTN_0
    public var longPressSeconds = 1.5
    public var veryLongPressSeconds = 5.0

    /// Start a run by itself on sustained movement.
    public var autoStart = false
    public var autoStartSpeed = 1.5
    public var autoStartAfterSeconds = 15.0

    /// The paired heart-rate strap and an optional backup, as "AA:BB:CC:DD:EE:FF" (nil: not set
    /// here; `pacerctl strap pair` may have chosen one), and the adapter (nil: the first).
    public var heartRateStrap: String?
    public var heartRateBackupStrap: String?
    public var bluetoothAdapter: String?

    public init() {}

    public var maxHeartRate: Int {
        maxHeartRateSetting ?? Int((208 - 0.7 * Double(age)).rounded())
    }

    /// Parses a config file's text. `file` is only used in error messages.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> PacerConfiguration {
        var config = PacerConfiguration()
        var splitDistanceSet = false
        for entry in try TOMLSubset.parse(text, file: file) {
            let reader = EntryReader(entry: entry, file: file)
            switch entry.key {
            case "units.system":
                guard case .string(let s) = entry.value, let system = UnitSystem(rawValue: s) else {
                    throw reader.fail("expected \"metric\" or \"imperial\"")
                }
                config.units = system
            case "tracking.split_distance_m":
                config.tracking.splitDistanceMeters = try reader.number(in: 100...100_000, "a distance in metres from 100 to 100000")
                splitDistanceSet = true
            case "tracking.resume_above_mps":
                config.tracking.resumeAboveSpeed = try reader.number(in: 0.1...5, "a speed in m/s from 0.1 to 5")
            case "tracking.pause_below_mps":
                config.tracking.pauseBelowSpeed = try reader.number(in: 0.05...5, "a speed in m/s from 0.05 to 5")
            case "tracking.gps_lost_after_s":
                config.tracking.gpsLostAfterSeconds = try reader.number(in: 2...120, "seconds from 2 to 120")
            case "gps.host":
                config.gpsHost = try reader.string("a host name or address in quotes", allowEmpty: false)
            case "gps.port":
                config.gpsPort = try reader.integer(in: 1...65535, "a TCP port from 1 to 65535")
            case "storage.path":
                config.databasePath = try reader.absolutePath()
            case "storage.keep_raw_days":
                let days = try reader.integer(in: 0...36_500, "a whole number of days from 0 to 36500 (0 keeps them for ever)")
                config.keepRawDays = days == 0 ? nil : days
            case "control.socket":
                config.controlSocket = try reader.absolutePath()
            case "control.group":
                config.controlGroup = try reader.string("a group name in quotes", allowEmpty: false)
            case "profile.age":
                config.age = try reader.integer(in: 10...100, "an age in years from 10 to 100")
            case "profile.max_hr_bpm":
                let bpm = try reader.integer(in: 0...240, "beats per minute from 100 to 240, or 0 to estimate it from the age")
                guard bpm == 0 || bpm >= 100 else { throw reader.fail("expected beats per minute from 100 to 240, or 0 to estimate it from the age, got \(bpm)") }
                config.maxHeartRateSetting = bpm == 0 ? nil : bpm
            case "profile.timezone":
                let zone = try reader.string("a zone name in quotes, e.g. \"Europe/Rome\", or \"\" for the system's", allowEmpty: true)
                config.timeZone = zone.isEmpty ? nil : zone
            case "buttons.device":
                let path = try reader.string("a device path in quotes, or \"\" for no buttons", allowEmpty: true)
                guard path.isEmpty || path.hasPrefix("/") else { throw reader.fail("expected an absolute path, got \"\(path)\"") }
                config.buttonDevice = path.isEmpty ? nil : path
            case "buttons.keys":
                config.buttonKeyCodes = try reader.integers(in: 1...0x2ff, "an array of evdev key codes, e.g. [28, 256]")
            case "buttons.long_press_s":
                config.longPressSeconds = try reader.number(in: 0.3...10, "seconds from 0.3 to 10")
            case "buttons.very_long_press_s":
                config.veryLongPressSeconds = try reader.number(in: 1...30, "seconds from 1 to 30")
            case "run.auto_start":
                config.autoStart = try reader.bool()
            case "run.auto_start_speed_mps":
                config.autoStartSpeed = try reader.number(in: 0.5...10, "a speed in m/s from 0.5 to 10")
            case "run.auto_start_after_s":
                config.autoStartAfterSeconds = try reader.number(in: 3...300, "seconds from 3 to 300")
            case "hr.strap":
                config.heartRateStrap = try reader.bluetoothAddress()
            case "hr.backup_strap":
                config.heartRateBackupStrap = try reader.bluetoothAddress()
            case "hr.adapter":
                let name = try reader.string("an adapter name in quotes, e.g. \"hci0\", or \"\" for the first", allowEmpty: true)
                guard name.isEmpty || (name.hasPrefix("hci") && name.dropFirst(3).allSatisfy(\.isNumber) && name.count > 3) else {
                    throw reader.fail("expected an adapter name like \"hci0\", got \"\(name)\"")
                }
                config.bluetoothAdapter = name.isEmpty ? nil : name
            default:
                throw reader.fail("unknown key (check its spelling and section)")
            }
            if config.tracking.pauseBelowSpeed >= config.tracking.resumeAboveSpeed {
                throw reader.fail("tracking.pause_below_mps must be lower than tracking.resume_above_mps")
            }
            if config.longPressSeconds >= config.veryLongPressSeconds {
                throw reader.fail("buttons.long_press_s must be shorter than buttons.very_long_press_s")
            }
        }
        if config.units == .imperial && !splitDistanceSet {
            config.tracking.splitDistanceMeters = 1609.344
        }
        return config
    }
}

/// Typed reads of one entry, each failing with the entry's file, line and key.
private struct EntryReader {
    let entry: TOMLEntry
    let file: String

    func fail(_ problem: String) -> ConfigError {
        ConfigError(file: file, line: entry.line, key: entry.key, problem: problem)
    }

    func number(in range: ClosedRange<Double>, _ what: String) throws(ConfigError) -> Double {
        guard case .number(let n) = entry.value else { throw fail("expected \(what), got \(entry.value.typeName)") }
        guard range.contains(n) else { throw fail("expected \(what), got \(show(n))") }
        return n
    }

    func integer(in range: ClosedRange<Int>, _ what: String) throws(ConfigError) -> Int {
        guard case .number(let n) = entry.value else { throw fail("expected \(what), got \(entry.value.typeName)") }
        guard n == n.rounded(), abs(n) < 1e15 else { throw fail("expected \(what), got \(show(n))") }
        guard range.contains(Int(n)) else { throw fail("expected \(what), got \(Int(n))") }
        return Int(n)
    }

    func integers(in range: ClosedRange<Int>, _ what: String) throws(ConfigError) -> [Int] {
        guard case .array(let items) = entry.value, !items.isEmpty else { throw fail("expected \(what), got \(entry.value.typeName)") }
        var result: [Int] = []
        for item in items {
            guard case .number(let n) = item, n == n.rounded(), abs(n) < 1e15, range.contains(Int(n)) else {
                throw fail("expected \(what); \(item.typeName == "a number" ? show(item) : item.typeName) is not one")
            }
            result.append(Int(n))
        }
        return result
    }

    func string(_ what: String, allowEmpty: Bool) throws(ConfigError) -> String {
        guard case .string(let s) = entry.value else { throw fail("expected \(what), got \(entry.value.typeName)") }
        guard allowEmpty || !s.isEmpty else { throw fail("expected \(what), got an empty string") }
        return s
    }

    func absolutePath() throws(ConfigError) -> String {
        guard case .string(let path) = entry.value else { throw fail("expected an absolute path in quotes, got \(entry.value.typeName)") }
        guard path.hasPrefix("/") else { throw fail("expected an absolute path, got \"\(path)\"") }
        return path
    }

    /// "AA:BB:CC:DD:EE:FF" in either case, upper-cased; "" is nil.
    func bluetoothAddress() throws(ConfigError) -> String? {
        let text = try string("a Bluetooth address in quotes, e.g. \"C8:4F:0E:12:34:56\", or \"\" for none", allowEmpty: true)
        if text.isEmpty { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
            throw fail("expected a Bluetooth address like \"C8:4F:0E:12:34:56\", got \"\(text)\"")
        }
        return text.uppercased()
    }

    func bool() throws(ConfigError) -> Bool {
        guard case .bool(let b) = entry.value else { throw fail("expected true or false, got \(entry.value.typeName)") }
        return b
    }
}

/// A number as a person wrote it: 5, not 5.0.
private func show(_ n: Double) -> String {
    n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
}

private func show(_ value: TOMLValue) -> String {
    if case .number(let n) = value { return show(n) }
    return value.typeName
}
