/// What race progress takes: the device's own pipeline output (what live and replay both have),
/// or a bare fix (what the cloud has of a runner), and the runner's own "start".
public enum RaceInput: Sendable, Equatable {
    case position(RacePosition)
    /// The runner started race mode by hand: without an official start time, this moment is the gun.
    case runnerStarted

    /// RunTracker's sample: the filtered position, its speed and its odometer.
    public static func sample(_ sample: TrackSample) -> RaceInput {
        .position(RacePosition(coordinate: sample.coordinate, speed: sample.moving ? sample.speed : 0, odometer: sample.distance))
    }
}

/// One position of the runner.
public struct RacePosition: Sendable, Equatable {
    public var coordinate: Coordinate
    /// m/s (Doppler or smoothed), 0 when standing; nil when unknown. Tells setting off and
    /// stopping apart from moving on, for the crossings.
    public var speed: Double?
    /// Metres run so far by the runner's own count (RunTracker's distance), nil when unknown:
    /// predicts where on the course the runner now is, which decides between two legs or laps
    /// that both lie near the position.
    public var odometer: Double?
    /// Horizontal error estimate (metres), nil when unknown: a fix worse than
    /// `RaceConfiguration.maxAccuracyMeters` is not placed.
    public var accuracy: Double?

    public init(coordinate: Coordinate, speed: Double? = nil, odometer: Double? = nil, accuracy: Double? = nil) {
        self.coordinate = coordinate
        self.speed = speed
        self.odometer = odometer
        self.accuracy = accuracy
    }
}

/// What race progress decided. The shell says, sends or shows them; the core does no I/O.
public enum RaceEvent: Sendable, Equatable {
    /// The runner crossed the start line (interpolated between fixes): net time counts from it.
    case started(at: Timestamp)
    /// Where the runner is along the course, at every placed position.
    case progress(RaceProgress)
    /// A stage (1-based, as the organiser numbers them) passed.
    case stage(index: Int, at: Timestamp)
    /// A distance-to-go cue point passed (see `RaceCuePoints`); `meters` is the cue point's distance.
    case toGo(meters: Double, at: Timestamp)
    /// More than `offCourseMeters` from the course for `offCourseSeconds`; said once.
    case offCourse(at: Timestamp, meters: Double)
    case backOnCourse(at: Timestamp)
    /// The arrival crossed: the result. Nothing follows it.
    case finished(RaceResult)
}

public struct RaceProgress: Sendable, Equatable {
    public var time: Timestamp
    /// Metres along the course: negative behind the start line, past `length` beyond the arrival.
    public var meters: Double
    /// Metres to the arrival (never negative).
    public var toGo: Double
    /// Metres between the position and the course.
    public var fromCourse: Double

    public init(time: Timestamp, meters: Double, toGo: Double, fromCourse: Double) {
        self.time = time
        self.meters = meters
        self.toGo = toGo
        self.fromCourse = fromCourse
    }
}

public struct RaceResult: Sendable, Equatable {
    /// The arrival crossed, interpolated between fixes.
    public var finishTime: Timestamp
    /// The runner's own start-line crossing.
    public var startTime: Timestamp
    /// The official start, when there was one.
    public var gunTime: Timestamp?

    public init(finishTime: Timestamp, startTime: Timestamp, gunTime: Timestamp?) {
        self.finishTime = finishTime
        self.startTime = startTime
        self.gunTime = gunTime
    }

    /// The official result: from the gun to the arrival (seconds).
    public var gunSeconds: Double? { gunTime.map { finishTime.seconds(since: $0) } }
    /// From the runner's own start-line crossing to the arrival (seconds), shown beside it.
    public var netSeconds: Double { finishTime.seconds(since: startTime) }
}
