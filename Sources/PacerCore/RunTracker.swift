/// The run-tracking pipeline: GPS fixes and heart-rate samples in, decisions out.
///
/// Pure and deterministic: it reads no clock and does no I/O; time is the samples' own (GPS time).
/// The daemon and `pacerctl replay` feed it the same inputs in the same order and get the same
/// result. Every output for a sample depends only on that sample and earlier ones (causal), since
/// that is what the runner hears at that moment.
///
/// Distance: with a Doppler speed (the receiver reports speed and course) the distance is the
/// integral of the measured speed while moving. Doppler speed is far more precise than position
/// differences, whose jitter makes a raw fix-to-fix sum overstate by 2-18 %. Without Doppler, the
/// speed is the along-track speed from positions (AlongTrackSpeed: steps projected on the direction
/// of travel, fitted over the time since the last change of pace), which neither cuts corners nor
/// counts jitter; the speed reported is the same fit two fixes late (fixed lag), which follows
/// bends better. Outages are bridged from the speeds around them, bounded by the straight line
/// between the fixes on either side.
public struct RunTracker: Sendable {
    public let configuration: TrackerConfiguration

    private var filter = PositionFilter()
    private var smoother = SpeedSmoother()
    private var alongTrack = AlongTrackSpeed()
    /// The speed reported without Doppler: the same estimate two fixes late, whose directions see
    /// where bends go. Motion and distance keep the undelayed one, so the lag never moves a stop
    /// or the distance.
    private var laggedAlongTrack = AlongTrackSpeed(configuration: .init(lag: 2))
    private var motion: MotionDetector
    private var splits: SplitTracker

    public private(set) var counts = FixCounts()
    public private(set) var distance = 0.0
    public private(set) var movingTime = 0.0
    public private(set) var maxSpeed = 0.0
    public private(set) var lastSample: TrackSample?

    private var timeOffsetMs: Int64 = 0
    private var lastFixTime: Timestamp?
    private var lastRawPosition: Coordinate?
    /// The newest fix's altitude (3D fixes only), to a tenth of a metre: stored and replayed alike.
    private var altitude: Double?
    /// Speed integrated at the previous epoch (0 when not moving there).
    private var lastIntegrand = 0.0
    private var nominalPeriod = 1.0
    private var gpsLostAnnounced = false
    private var warnedKinds: Set<String> = []

    private var firstTime: Timestamp?
    private var lastTime: Timestamp?
    private var heartRateSum = 0
    private var heartRateCount = 0
    private var heartRateMax: Int?

    /// Paused by the runner (button or CLI): fixes still move the filter, nothing is counted.
    public private(set) var isPaused = false

    private var laps: [Lap] = []
    private var lapStart: (distance: Double, movingTime: Double, time: Timestamp)?
    private var finished = false

    public init(configuration: TrackerConfiguration = TrackerConfiguration()) {
        self.configuration = configuration
        motion = MotionDetector(resumeAbove: configuration.resumeAboveSpeed, pauseBelow: configuration.pauseBelowSpeed)
        splits = SplitTracker(length: configuration.splitDistanceMeters)
    }

    // MARK: Inputs

    public mutating func ingest(_ fix: GPSFix) -> [TrackerEvent] {
        guard fix.mode == .twoD || fix.mode == .threeD else {
            counts.skipped[.noFix, default: 0] += 1
            var events: [TrackerEvent] = [.fixSkipped(.noFix, time: fix.time)]
            // A no-fix report still tells the time, so a lost GPS is noticed; it does not make
            // the run longer.
            if let t = fix.time { events += advance(to: Timestamp(milliseconds: t.milliseconds + timeOffsetMs)) }
            return events
        }
        if fix.status == .simulated {
            return skip(.simulated, fix.time, warning: ("gps_simulated", "The GPS receiver reports simulated fixes (demo mode); they are not recorded."))
        }
        guard let lat = fix.latitude, let lon = fix.longitude, lat.isFinite, lon.isFinite,
            abs(lat) <= 90, abs(lon) <= 180, !(lat == 0 && lon == 0)
        else { return skip(.invalidPosition, fix.time, warning: nil) }
        guard let rawTime = fix.time else {
            return skip(.noTime, nil, warning: ("gps_no_time", "GPS fixes carry no time (a GGA-only receiver?); they cannot be placed on the run's timeline and are skipped. Enable RMC or ZDA output on the receiver."))
        }

        var events: [TrackerEvent] = []
        var time = Timestamp(milliseconds: rawTime.milliseconds + timeOffsetMs)
        if let last = lastFixTime {
            let jump = time.seconds(since: last)
            if abs(jump) > configuration.timeJumpSeconds {
                // Keep the timeline continuous: place this fix one period after the last one.
                let rebased = last.adding(seconds: nominalPeriod)
                timeOffsetMs += rebased.milliseconds - time.milliseconds
                counts.timeJumps += 1
                events.append(.warning(TrackerWarning(time: rebased, kind: "gps_time_jump",
                    text: "GPS time jumped by \(Int(jump.rounded())) s (from \(last.iso8601) to \(time.iso8601)); the run continues on its own timeline.")))
                time = rebased
            } else if jump == 0 {
                return events + skip(.duplicate, time, warning: nil)
            } else if jump < 0 {
                return events + skip(.outOfOrder, time, warning: nil)
            }
        }
        // No loss check here: `accept` reports an outage that this very fix ends.
        extendTimeline(to: time)
        altitude = fix.mode == .threeD ? fix.altitude.flatMap { $0.isFinite && (-1_000...10_000).contains($0) ? ($0 * 10).rounded() / 10 : nil } : nil
        events += accept(fix, at: time, position: Coordinate(latitude: lat, longitude: lon))
        return events
    }

    public mutating func ingest(_ sample: HeartRateSample) -> [TrackerEvent] {
        extendTimeline(to: sample.time)
        let events = advance(to: sample.time)
        if sample.isValid {
            heartRateSum += sample.bpm
            heartRateCount += 1
            heartRateMax = max(heartRateMax ?? 0, sample.bpm)
        }
        return events
    }

    /// Lets time pass without a fix (the daemon's tick), so a lost GPS is noticed.
    public mutating func advance(to time: Timestamp) -> [TrackerEvent] {
        guard let last = lastFixTime, !gpsLostAnnounced,
            time.seconds(since: last) > configuration.gpsLostAfterSeconds
        else { return [] }
        gpsLostAnnounced = true
        return [.gpsLost(time: time)]
    }

    /// The runner's own pause and resume (auto-pause is separate and keeps working). Distance and
    /// moving time stop counting at once; the position keeps being tracked so that resuming does
    /// not count the way walked while paused.
    public mutating func apply(_ control: RunControl) -> [TrackerEvent] {
        switch control {
        case .lap: return markLap()
        case .pause:
            isPaused = true
            return []
        case .resume:
            isPaused = false
            return []
        }
    }

    /// The lap button: closes the current lap at the last sample.
    public mutating func markLap() -> [TrackerEvent] {
        guard let sample = lastSample else { return [] }
        return closeLap(at: sample)
    }

    /// Ends the run: the final partial split and lap.
    public mutating func finish() -> [TrackerEvent] {
        guard !finished, let sample = lastSample else { return [] }
        finished = true
        var events: [TrackerEvent] = []
        if let split = splits.finish(distance: distance, movingTime: movingTime, time: sample.time) {
            events.append(.split(split))
        }
        if !laps.isEmpty { events += closeLap(at: sample) }
        return events
    }

    public var summary: RunSummary {
        RunSummary(
            distance: distance,
            movingTime: movingTime,
            elapsedTime: firstTime.flatMap { first in lastTime.map { $0.seconds(since: first) } } ?? 0,
            averagePacePerKm: distance >= 1 && movingTime > 0 ? movingTime / distance * 1000 : nil,
            maxSpeed: maxSpeed,
            heartRateAverage: heartRateCount > 0 ? Double(heartRateSum) / Double(heartRateCount) : nil,
            heartRateMax: heartRateMax,
            startTime: firstTime,
            endTime: lastTime
        )
    }

    // MARK: Pipeline

    private mutating func accept(_ fix: GPSFix, at time: Timestamp, position: Coordinate) -> [TrackerEvent] {
        var events: [TrackerEvent] = []
        counts.accepted += 1
        let positionSigma = (fix.eph ?? 12) / 4
        let doppler: (speed: Double, course: Double)? =
            if let s = fix.speed, let c = fix.track, s.isFinite, c.isFinite, s >= 0 { (s, c) } else { nil }

        guard let previousTime = lastFixTime, let previousPosition = lastRawPosition, filter.isInitialized else {
            filter.restart(at: position, positionSigma: positionSigma)
            alongTrack.start(at: position, time: time.seconds(since: firstTime ?? time))
            laggedAlongTrack.start(at: position, time: time.seconds(since: firstTime ?? time))
            if let d = doppler { filter.update(speed: d.speed, course: d.course, sigma: 0.3) }
            let measured = doppler?.speed ?? 0
            _ = smoother.add(time: time.seconds(since: firstTime ?? time), speed: measured)
            if motion.update(speed: measured) { events.append(.motion(moving: true, time: time)) }
            lastIntegrand = motion.moving && !isPaused ? measured : 0
            lastFixTime = time
            lastRawPosition = position
            let sample = makeSample(time: time, speed: motion.moving && !isPaused ? measured : 0)
            events.append(.sample(sample))
            return events
        }

        let dt = time.seconds(since: previousTime)
        let isGap = MovingClock.isGap(dt, nominalPeriod: nominalPeriod)
        if !isGap { nominalPeriod += 0.1 * (dt - nominalPeriod) }
        if gpsLostAnnounced || dt > configuration.gpsLostAfterSeconds {
            if !gpsLostAnnounced { events.append(.gpsLost(time: previousTime.adding(seconds: configuration.gpsLostAfterSeconds))) }
            events.append(.gpsRegained(time: time, outageSeconds: dt))
            gpsLostAnnounced = false
        }

        filter.predict(dt: dt)
        if !filter.update(position: position, sigma: positionSigma) { counts.gatedPositions += 1 }
        if let d = doppler { filter.update(speed: d.speed, course: d.course, sigma: 0.3) }
        filter.recenter()

        let secondsIntoRun = time.seconds(since: firstTime ?? time)
        let alongTrackSpeed = alongTrack.update(position: position, time: secondsIntoRun, dt: dt, isGap: isGap)
        let laggedSpeed = laggedAlongTrack.update(position: position, time: secondsIntoRun, dt: dt, isGap: isGap)
        let measured = doppler?.speed ?? alongTrackSpeed
        if isGap { smoother.reset() }
        let smoothed = smoother.add(time: secondsIntoRun, speed: measured)
        let wasMoving = motion.moving
        // Doppler readings drive motion and distance directly: glitches are rare, while stops and
        // changes of pace are common and the smoother holds their first sample back as a suspect.
        // Only physically impossible readings are replaced by the smoothed value. The along-track
        // speed is already a fit over the current pace, so it is used as it is.
        let usedDirectly = doppler == nil || measured <= configuration.maxPlausibleSpeed
        let motionInput = usedDirectly || smoothed.accepted ? measured : smoothed.estimate
        let motionChanged = motion.update(speed: motionInput)
        if motionChanged { events.append(.motion(moving: motion.moving, time: time)) }
        let counting = motion.moving && !isPaused
        let integrand = counting ? (usedDirectly ? measured : smoothed.estimate) : 0
        let before = (distance: distance, movingTime: movingTime, time: previousTime)
        if isGap {
            let chord = WGS84.distance(previousPosition, position)
            let fromSpeed = (lastIntegrand + integrand) / 2 * dt
            let bridged = dt <= configuration.maxBridgeSeconds ? min(max(fromSpeed, chord), chord * 1.6) : chord
            if (wasMoving || motion.moving) && !isPaused {
                distance += bridged
                // A gap too long to bridge is a pause (MovingClock's rule, the imports' too).
                if MovingClock.gapIsMoving(dt, wasMoving: wasMoving, isMoving: motion.moving, configuration: configuration) { movingTime += dt }
                counts.bridgedGaps += 1
            }
        } else {
            distance += (lastIntegrand + integrand) / 2 * dt
            if counting { movingTime += dt }
        }
        lastIntegrand = integrand
        lastFixTime = time
        lastRawPosition = position

        // What the runner hears: the smoothed speed, except on the sample that starts a movement,
        // where the smoother still holds the new speed back as a suspect.
        let reported: Double
        if !counting {
            reported = 0
        } else if doppler == nil {
            // Just after a start the lagged fit still sees the standing fixes.
            reported = laggedSpeed >= configuration.pauseBelowSpeed ? laggedSpeed : measured
        } else {
            reported = smoothed.accepted || !motionChanged ? smoothed.estimate : motionInput
        }
        maxSpeed = max(maxSpeed, reported)
        let sample = makeSample(time: time, speed: reported)
        events.append(.sample(sample))
        for split in splits.advance(from: before, to: (distance, movingTime, time)) {
            events.append(.split(split))
        }
        return events
    }

    private mutating func makeSample(time: Timestamp, speed: Double) -> TrackSample {
        let sample = TrackSample(
            time: time, coordinate: filter.coordinate, speed: speed, distance: distance,
            moving: motion.moving && !isPaused, movingTime: movingTime, altitude: altitude)
        lastSample = sample
        if lapStart == nil { lapStart = (distance, movingTime, time) }
        return sample
    }

    /// The run's timeline spans its fixes and heart-rate samples, whichever came first and last.
    private mutating func extendTimeline(to time: Timestamp) {
        if firstTime.map({ time < $0 }) ?? true { firstTime = time }
        if lastTime.map({ time > $0 }) ?? true { lastTime = time }
    }

    private mutating func skip(_ reason: FixSkipReason, _ time: Timestamp?, warning: (kind: String, text: String)?) -> [TrackerEvent] {
        counts.skipped[reason, default: 0] += 1
        var events: [TrackerEvent] = [.fixSkipped(reason, time: time)]
        if let warning, warnedKinds.insert(warning.kind).inserted {
            events.append(.warning(TrackerWarning(time: time, kind: warning.kind, text: warning.text)))
        }
        return events
    }

    private mutating func closeLap(at sample: TrackSample) -> [TrackerEvent] {
        let start = lapStart ?? (0, 0, sample.time)
        let lap = Lap(
            index: laps.count + 1, distance: sample.distance - start.distance,
            time: sample.movingTime - start.movingTime, startTime: start.time, endTime: sample.time)
        laps.append(lap)
        lapStart = (sample.distance, sample.movingTime, sample.time)
        return [.lap(lap)]
    }
}
