/// What the body is doing, judged from GPS fixes alone, whether or not a run records or is
/// paused: the SOS rules need it to tell a heart that stopped (the body stops with it) from a
/// strap that failed (the runner keeps going).
public enum Motion: String, Sendable, Equatable {
    /// No fix for `BodyMotion.unknownAfterSeconds` (or none yet): the body cannot be seen.
    case unknown
    /// Moving, at about the pace of the last half minute.
    case atPace = "at_pace"
    /// Still moving, but well below that pace.
    case slowing
    /// Standing still (or lying).
    case stopped

    /// Moving at all: a strap fault now is not a collapse.
    public var isMoving: Bool { self == .atPace || self == .slowing }
}

/// The body's motion from fixes: speed (the receiver's Doppler speed, else the distance covered
/// over the last few seconds), median-of-3 against single glitches, and the tracker's hysteresis
/// (`MotionDetector`, the same thresholds as auto-pause) between moving and stopped. Pure: fixes
/// and times in, a state out.
public struct BodyMotion: Sendable {
    /// A fix as the motion needs it: time, position and, when the receiver measured one, its
    /// Doppler speed.
    public struct Fix: Sendable, Equatable {
        public var time: Timestamp
        public var coordinate: Coordinate
        public var dopplerSpeed: Double?

        public init(time: Timestamp, coordinate: Coordinate, dopplerSpeed: Double?) {
            self.time = time
            self.coordinate = coordinate
            self.dopplerSpeed = dopplerSpeed
        }
    }

    /// No fix for this long (or 2.5 fix intervals, whichever is longer): the motion is unknown.
    public static let unknownAfterSeconds = 5.0
    /// Moving below this share of the recent pace is slowing.
    public static let slowingShare = 0.6
    /// The recent pace is the median moving speed of this many seconds.
    public static let paceWindowSeconds = 30.0
    /// Without Doppler, speed is the distance to the fix at least this many seconds older.
    static let positionalBaseSeconds = 4.0

    private var detector: MotionDetector
    private var fixes: [Fix] = []
    private var speeds: [Double] = []
    /// Moving speeds of the last `paceWindowSeconds`, for the pace.
    private var paced: [(time: Timestamp, speed: Double)] = []
    private var interval = 1.0
    public private(set) var lastFix: Timestamp?
    /// Since when the body stands still (the first fix that said so); nil while moving.
    public private(set) var stoppedSince: Timestamp?
    /// Since when the body moves; nil while stopped.
    public private(set) var movingSince: Timestamp?
    /// The smoothed speed of the newest fix, m/s.
    public private(set) var speed = 0.0

    public init(configuration: TrackerConfiguration = TrackerConfiguration()) {
        detector = MotionDetector(resumeAbove: configuration.resumeAboveSpeed, pauseBelow: configuration.pauseBelowSpeed)
    }

    public mutating func observe(_ fix: Fix) {
        if let last = fixes.last {
            let dt = fix.time.seconds(since: last.time)
            guard dt > 0 else { return }   // a repeat of the same epoch, or out of order
            if dt < 10 { interval += 0.2 * (dt - interval) }
            // After an outage the old fixes say nothing about the speed now.
            if dt > unknownAfter { fixes.removeAll(); speeds.removeAll() }
        }
        fixes.append(fix)
        let base = fix.time.adding(seconds: -Self.positionalBaseSeconds)
        if let keep = fixes.lastIndex(where: { $0.time <= base }), keep > 0 { fixes.removeFirst(keep) }

        let measured: Double
        if let doppler = fix.dopplerSpeed, doppler.isFinite, doppler >= 0 {
            measured = doppler
        } else if let first = fixes.first, first.time <= base || fixes.count >= 3 {
            let dt = fix.time.seconds(since: first.time)
            measured = dt > 0 ? WGS84.distance(first.coordinate, fix.coordinate) / dt : 0
        } else {
            measured = 0
        }
        speeds.append(measured)
        if speeds.count > 3 { speeds.removeFirst(speeds.count - 3) }
        speed = speeds.sorted()[speeds.count / 2]

        let wasSeen = lastFix != nil && fix.time.seconds(since: lastFix!) <= unknownAfter
        lastFix = fix.time
        _ = detector.update(speed: speed)
        if detector.moving {
            if movingSince == nil || !wasSeen { movingSince = fix.time }
            stoppedSince = nil
            paced.append((fix.time, speed))
        } else {
            if stoppedSince == nil || !wasSeen { stoppedSince = fix.time }
            movingSince = nil
        }
        if let keep = paced.firstIndex(where: { fix.time.seconds(since: $0.time) <= Self.paceWindowSeconds }), keep > 0 {
            paced.removeFirst(keep)
        } else if let newest = paced.last, fix.time.seconds(since: newest.time) > Self.paceWindowSeconds {
            paced.removeAll()
        }
    }

    /// How long without a fix makes the motion unknown.
    private var unknownAfter: Double { max(Self.unknownAfterSeconds, 2.5 * interval) }

    /// The motion at `now`.
    public func state(at now: Timestamp) -> Motion {
        guard let lastFix, now.seconds(since: lastFix) <= unknownAfter else { return .unknown }
        guard detector.moving else { return .stopped }
        let pace = paced.map(\.speed).sorted()[paced.count / 2]
        return speed < Self.slowingShare * pace ? .slowing : .atPace
    }

    /// Since when the motion has been unknown (the newest fix's time plus the limit), if it is.
    public func unknownSince(at now: Timestamp) -> Timestamp? {
        guard let lastFix else { return nil }
        let since = lastFix.adding(seconds: unknownAfter)
        return now >= since ? since : nil
    }
}
