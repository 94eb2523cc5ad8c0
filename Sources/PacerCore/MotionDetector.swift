/// Moving or standing, from the measured speed, with hysteresis so noise around one threshold
/// cannot flap it. Standing still accrues neither distance nor moving time (auto-pause).
struct MotionDetector: Sendable {
    var resumeAbove: Double
    var pauseBelow: Double
    private(set) var moving = false

    init(resumeAbove: Double, pauseBelow: Double) {
        self.resumeAbove = resumeAbove
        self.pauseBelow = pauseBelow
    }

    /// Returns true when the state changed.
    mutating func update(speed: Double) -> Bool {
        if moving, speed < pauseBelow {
            moving = false
            return true
        }
        if !moving, speed > resumeAbove {
            moving = true
            return true
        }
        return false
    }

    mutating func reset() { moving = false }
}
