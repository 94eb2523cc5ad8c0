/// Moving time by the tracker's rules (`RunTracker`), for tracks read afterwards (the cloud's
/// imports): the same hysteresis between moving and standing (`MotionDetector`, the
/// configuration's resume and pause speeds), the same test of what a gap between fixes is, and
/// the same rule of which gaps count as moving. A recording that was stopped and started again
/// (a file's new track or segment) is a pause.
public struct MovingClock: Sendable {
    public let configuration: TrackerConfiguration
    public private(set) var movingTime = 0.0
    private var motion: MotionDetector
    private var nominalPeriod = 1.0
    private var lastTime: Double?

    public init(configuration: TrackerConfiguration = TrackerConfiguration()) {
        self.configuration = configuration
        motion = MotionDetector(resumeAbove: configuration.resumeAboveSpeed, pauseBelow: configuration.pauseBelowSpeed)
    }

    /// A step of `dt` seconds is a gap (a lost fix, not the receiver's period) past this.
    public static func isGap(_ dt: Double, nominalPeriod: Double) -> Bool { dt > max(3.0, 2.2 * nominalPeriod) }

    /// Whether a gap counts as moving time: moving on one side of it, and short enough to be
    /// bridged; a longer one is a pause (the recording stopped, or the runner did).
    public static func gapIsMoving(_ dt: Double, wasMoving: Bool, isMoving: Bool, configuration: TrackerConfiguration) -> Bool {
        (wasMoving || isMoving) && dt <= configuration.maxBridgeSeconds
    }

    /// The next fix at `time` seconds with the `speed` measured there; `newSegment`: the
    /// recording starts again here. Returns whether the runner is moving at it.
    @discardableResult
    public mutating func add(time: Double, speed: Double, newSegment: Bool = false) -> Bool {
        defer { lastTime = time }
        let wasMoving = motion.moving
        _ = motion.update(speed: speed)
        guard let lastTime, !newSegment else { return motion.moving }
        let dt = time - lastTime
        guard dt > 0 else { return motion.moving }
        if Self.isGap(dt, nominalPeriod: nominalPeriod) {
            if Self.gapIsMoving(dt, wasMoving: wasMoving, isMoving: motion.moving, configuration: configuration) { movingTime += dt }
        } else {
            nominalPeriod += 0.1 * (dt - nominalPeriod)
            if motion.moving { movingTime += dt }
        }
        return motion.moving
    }
}
