@testable import PacerCore

/// Deterministic 1 Hz (or any period) TrackSamples built in the test: each sample is `period`
/// seconds after the previous one and adds `speed × period` metres while moving. No receiver
/// noise, no tracker: what the coach is fed is exactly what the test says.
struct SampleRunner {
    static let t0 = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!

    var time: Double = 0
    var distance: Double = 0
    var movingTime: Double = 0
    var period: Double = 1
    private var first = true

    init(period: Double = 1) {
        self.period = period
    }

    /// The next sample: at t = 0 for the first, then `period` later. Moving unless told, or speed 0.
    mutating func next(_ speed: Double, moving: Bool? = nil) -> TrackSample {
        let isMoving = moving ?? (speed > 0)
        if first {
            first = false
        } else {
            time += period
            if isMoving {
                distance += speed * period
                movingTime += period
            }
        }
        return TrackSample(time: Self.at(time), coordinate: Coordinate(latitude: 45.4775, longitude: 9.2241),
                           speed: isMoving ? speed : 0, distance: distance, moving: isMoving, movingTime: movingTime)
    }

    /// One sample per speed, in order.
    mutating func samples(_ speeds: [Double]) -> [TrackSample] {
        speeds.map { next($0) }
    }

    static func at(_ seconds: Double) -> Timestamp { t0.adding(seconds: seconds) }
}

extension Timestamp {
    /// Seconds since the synthetic runs' t0.
    var t: Double { seconds(since: SampleRunner.t0) }
}

/// `count` seconds at `speed`.
func hold(_ speed: Double, _ count: Int) -> [Double] { Array(repeating: speed, count: count) }

extension CueKind {
    var isCorrective: Bool { self == .speedUp || self == .slowDown || self == .onTarget }
}

extension Array where Element == Cue {
    var corrective: [Cue] { filter { $0.kind.isCorrective } }
    func of(_ kind: CueKind) -> [Cue] { filter { $0.kind == kind } }
    var times: [Double] { map(\.time.t) }
    var texts: [String] { map(\.text) }
}

/// Spoken text never shows a clock ("5:12") or a unit abbreviation ("/km").
func isSpeakable(_ text: String) -> Bool {
    !text.contains(/\d:\d/) && !text.contains("/") && !text.contains(/\d(km|m|mi|s|h)\b/)
}
