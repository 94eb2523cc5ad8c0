/// Starts a run by itself when the runner keeps moving: `minimumSpeed` or faster (up to
/// `maximumSpeed`) for `sustainedSeconds` of GPS time.
///
/// Each epoch is moving or not by a majority of it and the two epochs before it, so one stray fix
/// (a Doppler dropout while running, a jump while standing) changes nothing; two in a row do.
/// The movement is timed from its first moving epoch. It says so once, then stays quiet until
/// `reset`. Pure: time and speed come from the fixes. Several fixes of one epoch (gpsd sends a TPV
/// per sentence) count once, the latest winning.
public struct AutoStartDetector: Sendable {
    public let configuration: AutoStartConfiguration

    private enum Phase: Sendable {
        /// Waiting for sustained movement.
        case armed
        /// Reported; quiet until reset.
        case started
        /// After a run: waiting for the runner to stand (or walk) for `sustainedSeconds` first.
        case waitingForStill
    }

    private struct Sample: Sendable {
        var time: Timestamp
        var moving: Bool
    }

    /// What the majority vote says and since when; restored when an epoch's fix is replaced.
    private struct Trend: Sendable {
        var moving: Bool
        var since: Timestamp
    }

    private var phase = Phase.armed
    /// The last three epochs, oldest first.
    private var recent: [Sample] = []
    private var trend: Trend?
    /// The trend before the latest epoch, for a later fix of that same epoch.
    private var trendBeforeLatest: Trend?

    public init(configuration: AutoStartConfiguration = AutoStartConfiguration()) {
        self.configuration = configuration
    }

    /// True while a start can be reported.
    public var isArmed: Bool { phase == .armed }

    /// A gpsd fix: only 2D/3D fixes with a time and a speed count; simulated ones never do.
    public mutating func ingest(_ fix: GPSFix) -> AutoStart? {
        guard fix.mode == .twoD || fix.mode == .threeD, fix.status != .simulated,
            let time = fix.time, let speed = fix.speed
        else { return nil }
        return ingest(time: time, speed: speed)
    }

    /// One epoch's GPS time and speed over ground (m/s).
    public mutating func ingest(time: Timestamp, speed: Double) -> AutoStart? {
        guard phase != .started, speed.isFinite else { return nil }
        if let last = recent.last {
            if time == last.time {
                recent.removeLast()
                trend = trendBeforeLatest
            } else if time < last.time || time.seconds(since: last.time) > configuration.maximumGapSeconds {
                // A time jump or an outage: the movement before it says nothing about now.
                recent.removeAll()
                trend = nil
            }
        }
        trendBeforeLatest = trend
        let moving = speed >= configuration.minimumSpeed && speed <= configuration.maximumSpeed
        recent.append(Sample(time: time, moving: moving))
        if recent.count > 3 { recent.removeFirst() }

        let movingCount = recent.reduce(0) { $0 + ($1.moving ? 1 : 0) }
        let voted = 2 * movingCount > recent.count
        if trend?.moving != voted {
            // Timed from the first epoch of the window that agrees with the new trend.
            let since = recent.first { $0.moving == voted }?.time ?? time
            trend = Trend(moving: voted, since: since)
        }
        guard let trend, time.seconds(since: trend.since) >= configuration.sustainedSeconds else { return nil }

        switch phase {
        case .armed where trend.moving:
            phase = .started
            return AutoStart(time: time, movingSince: trend.since)
        case .waitingForStill where !trend.moving:
            phase = .armed
            return nil
        default:
            return nil
        }
    }

    /// Arms the detector again. With `untilStill`, as after a run the runner stopped while still
    /// moving, a new start needs the runner to stand or walk for `sustainedSeconds` first;
    /// otherwise the same movement would start another run at once.
    public mutating func reset(untilStill: Bool = false) {
        phase = untilStill ? .waitingForStill : .armed
        recent.removeAll()
        trend = nil
        trendBeforeLatest = nil
    }
}
