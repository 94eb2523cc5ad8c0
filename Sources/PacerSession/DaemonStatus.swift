import PacerConfig
import PacerCore

/// The daemon's state as `pacerctl status` and STATUS= show it.
public struct DaemonStatus: Sendable, Equatable {
    public enum RunPhase: String, Sendable {
        case idle
        /// Started, but no fix yet: the run's row appears with its first fix.
        case waitingForFix = "waiting_for_fix"
        case recording
        case paused
    }

    public enum GPSState: String, Sendable {
        case gpsdUnreachable = "gpsd_unreachable"
        case noFix = "no_fix"
        case fix2D = "2d_fix"
        case fix3D = "3d_fix"

        /// The readiness check's words for it: "GPS 3D fix. Heart rate 72. ..."
        public var spoken: String {
            switch self {
            case .fix3D: "GPS 3D fix"
            case .fix2D: "GPS 2D fix"
            case .noFix: "No GPS fix yet"
            case .gpsdUnreachable: "GPS receiver not available"
            }
        }
    }

    public var phase: RunPhase = .idle
    public var runID: Int64?
    public var distance = 0.0
    public var movingTime = 0.0
    /// GPS time of the run's newest sample: how far the run has got.
    public var lastSampleTime: Timestamp?
    public var gps: GPSState = .gpsdUnreachable
    /// Set while the store refuses writes (full disk): the pipeline runs on, the data waits in memory.
    public var storeProblem: String?
    public var units: PacerConfiguration.UnitSystem = .metric
    public var strap = StrapStatus()
    /// The sentence of the last spoken readiness check (the reply to `readiness`).
    public var readiness: String?
    /// The wearable's own battery, when it has one ([power] battery).
    public var deviceBatteryPercent: Int?
    /// The newest fix is inside one of `[upload]`'s privacy zones (nil: no fix yet).
    public var inPrivatePlace: Bool?
    /// Race mode, while it is on.
    public var race: RaceStatus?

    public init() {}

    /// Equal but for the figures that move with every fix.
    public func sameState(as other: DaemonStatus) -> Bool {
        phase == other.phase && runID == other.runID && gps == other.gps && storeProblem == other.storeProblem && units == other.units
            && strap.sameState(as: other.strap) && inPrivatePlace == other.inPrivatePlace
            && race?.id == other.race?.id && race?.startedAt == other.race?.startedAt && race?.result == other.race?.result
            && race?.offCourse == other.race?.offCourse
    }

    /// One line for `systemctl status`, e.g. "Recording run 12: 5.21 km, GPS 3D fix".
    public var line: String {
        let gpsText = switch gps {
        case .gpsdUnreachable: "gpsd not reachable"
        case .noFix: "GPS no fix"
        case .fix2D: "GPS 2D fix"
        case .fix3D: "GPS 3D fix"
        }
        let runText: String = switch phase {
        case .idle: "Idle"
        case .waitingForFix: "Run started, waiting for a GPS fix"
        case .recording: "Recording run \(runID.map(String.init) ?? "?"): \(distanceText)"
        case .paused: "Paused run \(runID.map(String.init) ?? "?"): \(distanceText)"
        }
        let raceText = race.map { ", \(raceLine($0))" } ?? ""
        if let storeProblem { return "\(runText), NOT SAVING (\(storeProblem)), \(gpsText), \(strap.text)\(raceText)" }
        return "\(runText), \(gpsText), \(strap.text)\(raceText)"
    }

    /// "race Naviglio 10k: 3.20 of 10.01 km", "race Naviglio 10k: finished, gun 41:58", ...
    private func raceLine(_ race: RaceStatus) -> String {
        if let result = race.result {
            let gun = result.gunSeconds.map { " gun \(Self.clock($0))," } ?? ""
            return "race \(race.name): finished,\(gun) net \(Self.clock(result.netSeconds))"
        }
        let km = { (m: Double) in FixedDecimal.format(m / 1000, decimals: 2) ?? "?" }
        guard race.startedAt != nil, let progress = race.progress else { return "race \(race.name): not started, \(km(race.courseMeters)) km" }
        return "race \(race.name): \(km(max(0, progress))) of \(km(race.courseMeters)) km" + (race.offCourse ? ", OFF COURSE" : "")
    }

    /// 2538.4 s: "42:18" (to the nearest second, as it is said); past an hour "1:02:18".
    static func clock(_ seconds: Double) -> String {
        let whole = max(0, Int(seconds.rounded()))
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return whole >= 3600 ? "\(whole / 3600):\(two(whole / 60 % 60)):\(two(whole % 60))" : "\(whole / 60):\(two(whole % 60))"
    }

    public var distanceText: String {
        switch units {
        case .metric: FixedDecimal.format(distance / 1000, decimals: 2).map { "\($0) km" } ?? "? km"
        case .imperial: FixedDecimal.format(distance / 1609.344, decimals: 2).map { "\($0) mi" } ?? "? mi"
        }
    }
}
