/// A runner's progress along a race course: positions and time in, progress, crossings, cue
/// points, off-course warnings and the result out.
///
/// Pure and deterministic like RunTracker: no clock, no I/O; time is the input's own. The device
/// feeds it RunTracker's samples (live and `pacerctl replay` alike); the cloud may run one per
/// runner on the raw fixes it receives. The state is a few numbers beside the course, whose
/// arrays are shared between copies (copy-on-write), so a tracker is cheap to copy and keep.
///
/// Placement. Each position is placed at the nearest point of the course, searched only within a
/// window of the previous progress: from `backMarginMeters` behind it to `maxSpeed × dt +
/// aheadMarginMeters` ahead of it (dt since the last placed position). An out-and-back leg or
/// the next lap lies far outside that window, so a position can never jump onto it. Where two
/// parts of the course lie inside the window at once (the two sides of a hairpin), the one
/// nearest the progress predicted from the runner's own odometer wins. A position more than
/// `offCourseMeters` from the course is not placed; the window then grows with the time since
/// the last placed position (a long detour, a long outage), but never further back.
///
/// Crossings. A line (start, stage, arrival) is crossed between two positions; the time is
/// interpolated between them, by the speed of the moving one where the other stands (setting
/// off, stopping) and linearly otherwise. GPS puts a runner standing at a line a few metres off
/// it, which is a second or more at running pace, so near the start and the arrival the speed
/// decides, not the biased position:
/// - Start: the crossing that counts is the last one before the runner is `awayFromStartMeters`
///   along. Setting off from a stand within `lineToleranceMeters` of the line is crossing it
///   (the front row stands at the line). It is never before the gun: a runner already past the
///   line at the gun starts at the gun.
/// - Arrival: coming to a stop within `lineToleranceMeters` of it is finishing, at the moment
///   the runner left their running pace (runners slow down after the line, not before it);
///   running on past it, the finish is where the positions cross it.
public struct RaceProgressTracker: Sendable {
    public let course: RaceCourse
    public let configuration: RaceConfiguration

    /// The official start: the configured gun, or the moment the runner started race mode.
    public private(set) var gunTime: Timestamp?
    /// The runner's own start-line crossing, once they are away from the start.
    public private(set) var startTime: Timestamp?
    public private(set) var result: RaceResult?
    public private(set) var isOffCourse = false
    /// The last placed position's progress (metres along the course).
    public var progress: Double? { last?.progress }

    private struct Placed: Sendable {
        var time: Timestamp
        var coordinate: Coordinate
        var progress: Double
        var speed: Double?
        var odometer: Double?
    }

    private var last: Placed?
    /// The furthest progress placed since the start: progress never goes further back than
    /// `backMarginMeters` behind it, however many small steps back noise takes.
    private var furthest = -Double.infinity
    private var firstPlacedTime: Timestamp?
    private var offCourseSince: Timestamp?

    // The start: the crossing that counts so far, and whether it was a set-off at the line (a
    // crossing of the line itself right after it is the same start seen through the bias).
    private var startCandidate: Timestamp?
    private var setOffAtLine = false
    /// The last stand and the first moving position of a set-off at the line.
    private var setOff: (standing: Placed, moving: Placed)?

    private let cuePoints: [Double]
    private var nextCuePoint = 0
    private var nextStage = 0

    // The arrival: where its zone (within `lineToleranceMeters`) was entered and at what speed,
    // the positions' crossing of it, and the moment the runner left their pace in the zone.
    private var arrivalZoneSpeed: Double?
    private var arrivalCrossing: Timestamp?
    /// The two positions between which the runner left their pace in the arrival's zone.
    private var paceLeft: (at: Placed, after: Placed)?
    /// The runner stopped in the arrival's zone: since when, and where they stand now.
    private var stopped: (since: Timestamp, standing: Placed)?

    public init(course: RaceCourse, configuration: RaceConfiguration = RaceConfiguration()) {
        self.course = course
        self.configuration = configuration
        gunTime = configuration.gunTime
        cuePoints = RaceCuePoints.marks(courseLength: course.length, units: configuration.units)
    }

    public mutating func handle(_ input: RaceInput, now: Timestamp) -> [RaceEvent] {
        guard result == nil else { return [] }
        switch input {
        case .runnerStarted:
            if gunTime == nil { gunTime = now }
            return []
        case .position(let position):
            if let accuracy = position.accuracy, !(accuracy <= configuration.maxAccuracyMeters) { return [] }
            if let last, now <= last.time { return [] }
            return place(position, at: now)
        }
    }

    // MARK: Placement

    private mutating func place(_ position: RacePosition, at now: Timestamp) -> [RaceEvent] {
        let c = configuration
        let started = startTime != nil
        var lo: Double, hi: Double, predicted: Double, sigmaAlong: Double
        var motion: (east: Double, north: Double)?
        if let last {
            let dt = now.seconds(since: last.time)
            // Before the start the runner may walk about behind the line, back and forth.
            lo = started ? max(last.progress, furthest) - c.backMarginMeters : -c.startZoneMeters
            hi = last.progress + c.maxSpeed * dt + c.aheadMarginMeters
            let advance: Double? =
                if let o = position.odometer, let p = last.odometer { max(0, o - p) }
                else if let v = last.speed ?? position.speed { v * dt }
                else { nil }
            predicted = last.progress + (advance ?? 0)
            // The odometer is good to a few percent; without one, any speed up to the limit.
            sigmaAlong = advance.map { 10 + 0.1 * $0 } ?? (10 + c.maxSpeed * dt / 2)
            // The way the runner went since the last position, while that is recent and they
            // are moving: a runner runs the course forwards, which tells the way out of a
            // street from the way back along it.
            if dt <= 10, (position.speed ?? .infinity) >= c.movingSpeed {
                let back = WGS84.localOffset(of: last.coordinate, from: position.coordinate)
                motion = (-back.east, -back.north)
            }
        } else {
            (lo, hi, predicted, sigmaAlong) = (-c.startZoneMeters, c.startZoneMeters, 0, c.startZoneMeters)
        }
        if !started { hi = min(hi, c.startZoneMeters) }
        lo = max(lo, -c.startZoneMeters)
        hi = min(hi, course.length + c.startZoneMeters)
        guard lo <= hi,
            let match = nearest(to: position.coordinate, in: lo...hi, predicted: predicted, sigmaAlong: sigmaAlong, motion: motion)
        else { return [] }

        var events: [RaceEvent] = []
        // Off course: not placed; told once it has lasted (never before the start: the start
        // pen, the warm-up and the toilets are no part of the course).
        if match.fromCourse > c.offCourseMeters {
            let since = offCourseSince ?? now
            offCourseSince = since
            if started, !isOffCourse, now.seconds(since: since) >= c.offCourseSeconds {
                isOffCourse = true
                events.append(.offCourse(at: now, meters: match.fromCourse))
            }
            return events
        }
        offCourseSince = nil
        if isOffCourse, match.fromCourse <= c.backOnCourseMeters {
            isOffCourse = false
            events.append(.backOnCourse(at: now))
        }

        let b = Placed(time: now, coordinate: position.coordinate, progress: match.along, speed: position.speed,
                       odometer: position.odometer)
        if started { furthest = max(furthest, b.progress) }
        if firstPlacedTime == nil { firstPlacedTime = now }
        events.append(.progress(RaceProgress(time: now, meters: b.progress, toGo: max(0, course.length - b.progress),
                                             fromCourse: match.fromCourse)))
        if let a = last {
            if startTime == nil { events += start(from: a, to: b) }
            if startTime != nil { events += along(from: a, to: b) }
        } else if startTime == nil, b.progress >= c.awayFromStartMeters {
            events += start(from: nil, to: b)
        }
        last = b
        return events
    }

    /// The best place for `point` on the course within `window`: among the local nearest points
    /// (one per segment), the most likely given its distance from the point, from the predicted
    /// progress and how far the segment's direction is from the runner's `motion` (metres east
    /// and north since the last position). Before the start and past the arrival, the first and last segments
    /// are extended, so that progress is negative behind the line and beyond the length after it.
    private func nearest(to point: Coordinate, in window: ClosedRange<Double>, predicted: Double, sigmaAlong: Double,
                         motion: (east: Double, north: Double)?) -> (along: Double, fromCourse: Double)?
    {
        let cumulative = course.cumulativeDistance
        let segments = cumulative.count - 1
        // The first segment that ends at or after the window's start.
        var low = 0, high = segments - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid + 1] < window.lowerBound { low = mid + 1 } else { high = mid }
        }
        let sigmaAcross = 10.0
        // Metres of the step backwards along the segment: 3 m is a few fixes' jitter. Only
        // backwards counts, so a jittery step sideways past a corner costs nothing.
        let sigmaWay = 3.0
        var best: (along: Double, fromCourse: Double, cost: Double)?
        var closest = Double.infinity
        var i = low
        while i < segments, cumulative[i] <= window.upperBound {
            let length = cumulative[i + 1] - cumulative[i]
            let a = WGS84.localOffset(of: course.point(i), from: point)
            let candidate: (along: Double, fromCourse: Double)
            var way = 0.0
            if length <= 0 {
                candidate = (cumulative[i], (a.east * a.east + a.north * a.north).squareRoot())
            } else {
                let b = WGS84.localOffset(of: course.point(i + 1), from: point)
                let dx = b.east - a.east, dy = b.north - a.north
                let planar = dx * dx + dy * dy
                var u = planar > 0 ? -(a.east * dx + a.north * dy) / planar : 0
                let uLow = i == 0 ? (window.lowerBound - cumulative[i]) / length : max(0, (window.lowerBound - cumulative[i]) / length)
                let uHigh = i == segments - 1 ? (window.upperBound - cumulative[i]) / length
                    : min(1, (window.upperBound - cumulative[i]) / length)
                u = min(max(u, uLow), uHigh)
                let x = a.east + u * dx, y = a.north + u * dy
                candidate = (cumulative[i] + u * length, (x * x + y * y).squareRoot())
                if let motion, planar > 0 {
                    way = max(0, -(motion.east * dx + motion.north * dy) / planar.squareRoot()) / sigmaWay
                }
            }
            closest = min(closest, candidate.fromCourse)
            let across = candidate.fromCourse / sigmaAcross, ahead = (candidate.along - predicted) / sigmaAlong
            let cost = across * across + ahead * ahead + way * way
            if best.map({ cost < $0.cost }) ?? true { best = (candidate.along, candidate.fromCourse, cost) }
            i += 1
        }
        // The course's distance is to its nearest part in the window, whichever was chosen.
        return best.map { ($0.along, closest) }
    }

    // MARK: Crossings

    private func isMoving(_ p: Placed) -> Bool { (p.speed ?? .infinity) >= configuration.movingSpeed }

    /// When progress passed `line` between `a` and `b` (a.progress < line <= b.progress).
    private func crossing(of line: Double, from a: Placed, to b: Placed) -> Timestamp {
        let dt = b.time.seconds(since: a.time)
        let offset: Double
        if !isMoving(a), isMoving(b), let v = b.speed, v > 0 {
            // Setting off between the two: at b's speed back from b.
            offset = dt - (b.progress - line) / v
        } else if isMoving(a), !isMoving(b), let v = a.speed, v > 0 {
            // Stopping between the two: at a's speed on from a.
            offset = (line - a.progress) / v
        } else {
            offset = b.progress > a.progress ? (line - a.progress) / (b.progress - a.progress) * dt : dt
        }
        return a.time.adding(seconds: min(max(offset, 0), dt))
    }

    private mutating func start(from a: Placed?, to b: Placed) -> [RaceEvent] {
        let tolerance = configuration.lineToleranceMeters
        if let a {
            if !isMoving(a), isMoving(b) {
                // The moment of setting off, at b's speed back from b.
                startCandidate = crossing(of: a.progress, from: a, to: b)
                setOffAtLine = a.progress >= -tolerance
                setOff = (a, b)
            } else if !isMoving(b) {
                setOffAtLine = false
            }
            if a.progress < 0, b.progress >= 0, !setOffAtLine { startCandidate = crossing(of: 0, from: a, to: b) }
        }
        guard b.progress >= configuration.awayFromStartMeters else { return [] }
        // A set-off at the line, measured again now that the runner is away: the filtered
        // position of the first moving fix is still catching up with the runner (it moves
        // from one fix to the next as much as the filter believes), so the way from the stand
        // to here, less the runner's own count of what they ran after that first fix, is what
        // they ran before it, at its speed.
        if setOffAtLine, let (standing, moving) = setOff, let first = moving.odometer, let now = b.odometer,
            let v = moving.speed, v > 0
        {
            let before = (b.progress - standing.progress) - (now - first)
            let dt = moving.time.seconds(since: standing.time)
            startCandidate = moving.time.adding(seconds: -min(max(before / v, 0), dt))
        }
        // Never seen behind the line nor setting off: the first position is the best there is.
        var start = startCandidate ?? firstPlacedTime ?? b.time
        if let gun = gunTime, start < gun { start = gun }
        startTime = start
        var events: [RaceEvent] = [.started(at: start)]
        events += along(from: a ?? b, to: b)
        return events
    }

    /// Stages, cue points and the arrival, once started.
    private mutating func along(from a: Placed, to b: Placed) -> [RaceEvent] {
        var events: [RaceEvent] = []
        let stages = course.stageDistances
        while nextStage < stages.count, b.progress >= stages[nextStage] {
            let line = stages[nextStage]
            nextStage += 1
            events.append(.stage(index: nextStage, at: a.progress < line ? crossing(of: line, from: a, to: b) : b.time))
        }
        // Only the nearest of the cue points passed at once (after an outage) is worth saying.
        var passed: Double?
        while nextCuePoint < cuePoints.count, course.length - b.progress <= cuePoints[nextCuePoint] {
            passed = cuePoints[nextCuePoint]
            nextCuePoint += 1
        }
        if let passed {
            let line = course.length - passed
            events.append(.toGo(meters: passed, at: a.progress < line ? crossing(of: line, from: a, to: b) : b.time))
        }
        if let finish = arrival(from: a, to: b), let startTime {
            let result = RaceResult(finishTime: finish, startTime: startTime, gunTime: gunTime)
            self.result = result
            events.append(.finished(result))
        }
        return events
    }

    /// The finish time once it is decided: the runner stopped near the arrival, or ran on past it.
    private mutating func arrival(from a: Placed, to b: Placed) -> Timestamp? {
        let length = course.length, tolerance = configuration.lineToleranceMeters
        guard b.progress >= length - tolerance else { return nil }
        if arrivalZoneSpeed == nil { arrivalZoneSpeed = a.speed ?? 0 }
        if a.progress < length, b.progress >= length { arrivalCrossing = crossing(of: length, from: a, to: b) }
        // Leaving the pace: the speed fell below 90 % of the one the zone was entered at.
        // Speeding up again means it was not the finish.
        if let pace = arrivalZoneSpeed, pace >= configuration.movingSpeed, let va = a.speed, let vb = b.speed {
            let threshold = 0.9 * pace
            if va >= threshold, vb < threshold {
                paceLeft = (a, b)
            } else if vb >= threshold {
                paceLeft = nil
            }
        }
        if b.progress > length + tolerance {
            return arrivalCrossing ?? crossing(of: length, from: a, to: b)
        }
        if !isMoving(b) {
            // Stopped near the arrival: decided once the stand has lasted `settleSeconds`, when
            // the filtered position has caught up with where the runner stands.
            let since = stopped?.since ?? b.time
            stopped = (since, b)
            return b.time.seconds(since: since) >= Self.settleSeconds ? stopFinish() : nil
        }
        if stopped != nil {
            // Moving on before the stand settled: what is known is all there is.
            defer { stopped = nil }
            return stopFinish()
        }
        return nil
    }

    /// How long a stop near the arrival lasts before it is taken as the finish (seconds).
    static let settleSeconds = 3.0

    /// The finish of a runner who stopped near the arrival: the moment they left their pace, at
    /// that pace on from the last position at it (to where they stand, when they stopped dead).
    private func stopFinish() -> Timestamp? {
        guard let (at, after) = paceLeft, let v = at.speed, v > 0 else { return arrivalCrossing ?? stopped?.since }
        let end = !isMoving(after) ? stopped?.standing.progress ?? after.progress : after.progress
        let dt = after.time.seconds(since: at.time)
        return at.time.adding(seconds: min(max((end - at.progress) / v, 0), dt))
    }
}
