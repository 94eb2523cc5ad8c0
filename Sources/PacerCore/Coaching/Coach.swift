/// Decides what the runner hears during a run: start/pause/resume/stop, periodic summaries,
/// splits, GPS and heart-rate loss and return, low batteries, a full disk, and a workout's steps
/// and corrections.
///
/// Pure and deterministic like RunTracker: it is fed the tracker's decisions and the inputs'
/// own times, so `pacerctl replay` decides exactly the cues the daemon decided. What is said
/// when, and whether it is heard at all, is then up to the speech arbiter.
public struct Coach: Sendable {
    public let configuration: CoachConfiguration
    private let phrases: SpokenPhrases
    private let zones: HeartRateZones
    public private(set) var workout: WorkoutCoach?

    private var runStart: Timestamp?
    private var lastTime: Timestamp?
    private var lastSample: TrackSample?
    private var lastSplit: Split?
    private var nextSummaryDistance: Double?
    private var nextSummaryElapsed: Double?
    private var stopped = false

    private var lastHeartRate: (time: Timestamp, bpm: Int)?
    private var heartRateLost = false
    /// While lost: since when valid samples have come without a gap. "Back" is said only once
    /// they have for `heartRateBackAfterSeconds`, so a strap with flickering contact is told as
    /// lost once, not as lost-back-lost every few seconds.
    private var heartRateReturning: Timestamp?
    private var strapBatteryTold = false
    private var deviceBatteryTold = false
    private var storageFullTold = false

    /// A low battery is told again only after it has been this many percent above the threshold.
    static let batteryRearmPercent = 5

    public init(configuration: CoachConfiguration = CoachConfiguration(), workout: Workout? = nil) {
        self.configuration = configuration
        phrases = SpokenPhrases(units: configuration.units)
        zones = HeartRateZones(maxHeartRate: configuration.maxHeartRate)
        self.workout = workout.map { WorkoutCoach(workout: $0, configuration: configuration) }
        nextSummaryDistance = configuration.summaryEveryMeters
        nextSummaryElapsed = configuration.summaryEverySeconds
    }

    // MARK: Inputs

    /// The tracker's decisions for one input.
    public mutating func ingest(_ events: [TrackerEvent]) -> [Cue] {
        guard !stopped else { return [] }
        var cues: [Cue] = []
        var splitCue: Cue?
        // A split completed by this very input is the "last split" a summary speaks of.
        for case .split(let split) in events { lastSplit = split }
        for event in events {
            switch event {
            case .sample(let sample):
                cues += begin(at: sample.time, distance: sample.distance)
                lastSample = sample
                cues += passTime(to: sample.time)
                cues += workout?.ingest(sample) ?? []
                if let every = configuration.summaryEveryMeters, let next = nextSummaryDistance, sample.distance >= next {
                    nextSummaryDistance = (sample.distance / every).rounded(.down) * every + every
                    // A time summary due at the same moment has just said it all.
                    if !cues.contains(where: { $0.kind == .summary }), let text = summary(at: sample) {
                        cues.append(Cue(time: sample.time, kind: .summary, text: text))
                    }
                }
            case .split(let split):
                if configuration.splitCues {
                    splitCue = Cue(time: split.endTime, kind: .split, text: splitText(split))
                }
            case .lap(let lap):
                cues += workout?.lap(at: lap.endTime, distance: lastSample?.distance ?? 0) ?? []
            case .gpsLost(let time):
                cues += passTime(to: time)
                cues.append(Cue(time: time, kind: .gpsLost, text: "GPS signal lost."))
            case .gpsRegained(let time, _):
                cues.append(Cue(time: time, kind: .gpsBack, text: "GPS signal back."))
            case .motion, .fixSkipped, .warning:
                break
            }
        }
        // A summary at the same moment already says the distance: the split would repeat it.
        if let splitCue, !cues.contains(where: { $0.kind == .summary }) { cues.append(splitCue) }
        return cues
    }

    /// One heart-rate sample (valid or not) at its time.
    public mutating func ingest(_ sample: HeartRateSample) -> [Cue] {
        guard !stopped else { return [] }
        var cues = passTime(to: sample.time)
        guard sample.isValid else { return cues }
        if heartRateLost {
            let since = heartRateReturning ?? sample.time
            heartRateReturning = since
            if sample.time.seconds(since: since) >= configuration.heartRateBackAfterSeconds {
                heartRateLost = false
                heartRateReturning = nil
                cues.append(Cue(time: sample.time, kind: .hrBack, text: "Heart rate back, \(sample.bpm)."))
            }
        }
        lastHeartRate = (sample.time, sample.bpm)
        if runStart != nil { cues += workout?.ingest(heartRate: sample.bpm, at: sample.time) ?? [] }
        return cues
    }

    /// Time passes with no input (the daemon's tick): a lost strap or a time summary is noticed.
    public mutating func advance(to time: Timestamp) -> [Cue] {
        guard !stopped else { return [] }
        return passTime(to: time)
    }

    /// The runner's pause and resume (lap goes through the tracker's `.lap` event).
    public mutating func apply(_ control: RunControl) -> [Cue] {
        guard !stopped, let time = lastTime else { return [] }
        switch control {
        case .pause: return [Cue(time: time, kind: .runState, text: "Run paused.")]
        case .resume: return [Cue(time: time, kind: .runState, text: "Run resumed.")]
        case .lap: return []
        }
    }

    /// The run ends: the tracker's final decisions (a partial last split and lap, which are not
    /// announced: the stop says it all) and then the stop with its summary.
    public mutating func finish(_ events: [TrackerEvent], summary: RunSummary) -> [Cue] {
        let rest = events.filter {
            switch $0 {
            case .split, .lap: false
            default: true
            }
        }
        return ingest(rest) + stop(summary: summary)
    }

    /// The run stopped, with its final summary.
    public mutating func stop(summary: RunSummary) -> [Cue] {
        guard !stopped else { return [] }
        stopped = true
        guard let time = lastTime else { return [] }
        var text = "Run stopped. \(phrases.distance(summary.distance)) in \(phrases.duration(summary.movingTime))."
        if let pace = summary.averagePacePerKm { text += " Average pace \(phrases.pace(secondsPerKm: pace))." }
        return [Cue(time: time, kind: .runState, text: text)]
    }

    /// The strap's battery level (live only: replays have none).
    public mutating func strapBattery(_ percent: Int, at time: Timestamp) -> [Cue] {
        guard !stopped else { return [] }
        guard percent <= configuration.lowBatteryPercent else {
            // Re-armed only well above the threshold: a reading wobbling by 1 % is one episode.
            if percent >= configuration.lowBatteryPercent + Self.batteryRearmPercent { strapBatteryTold = false }
            return []
        }
        guard !strapBatteryTold else { return [] }
        strapBatteryTold = true
        return [Cue(time: time, kind: .batteryLow, text: "Heart rate strap battery low, \(percent) percent.")]
    }

    /// The wearable's own battery (sysfs power_supply), live only.
    public mutating func deviceBattery(_ percent: Int, at time: Timestamp) -> [Cue] {
        guard !stopped else { return [] }
        guard percent <= configuration.lowBatteryPercent else {
            if percent >= configuration.lowBatteryPercent + Self.batteryRearmPercent { deviceBatteryTold = false }
            return []
        }
        guard !deviceBatteryTold else { return [] }
        deviceBatteryTold = true
        return [Cue(time: time, kind: .batteryLow, text: "Battery low, \(percent) percent.")]
    }

    /// The store refused a write for lack of space (told once per episode).
    public mutating func storage(full: Bool, at time: Timestamp) -> [Cue] {
        guard !stopped else { return [] }
        guard full else {
            storageFullTold = false
            return []
        }
        guard !storageFullTold else { return [] }
        storageFullTold = true
        return [Cue(time: time, kind: .storageFull, text: "Storage full. This run is not being saved.")]
    }

    // MARK: Decisions

    private mutating func begin(at time: Timestamp, distance: Double) -> [Cue] {
        guard runStart == nil else { return [] }
        runStart = time
        if let every = configuration.summaryEverySeconds { nextSummaryElapsed = every }
        var cues = [Cue(time: time, kind: .runState, text: "Run started.")]
        cues += workout?.start(at: time, distance: distance) ?? []
        return cues
    }

    private mutating func passTime(to time: Timestamp) -> [Cue] {
        if lastTime.map({ time > $0 }) ?? true { lastTime = time }
        var cues: [Cue] = []
        if let last = lastHeartRate, time.seconds(since: last.time) > configuration.heartRateLostAfterSeconds {
            heartRateReturning = nil  // a gap: a return starts again from the next valid sample
        }
        if !heartRateLost, let last = lastHeartRate, time.seconds(since: last.time) > configuration.heartRateLostAfterSeconds {
            heartRateLost = true
            cues.append(Cue(time: time, kind: .hrLost, text: "Heart rate lost. Check the strap."))
        }
        if let start = runStart, let every = configuration.summaryEverySeconds, let next = nextSummaryElapsed,
            time.seconds(since: start) >= next, let sample = lastSample {
            nextSummaryElapsed = (time.seconds(since: start) / every).rounded(.down) * every + every
            if let text = summary(at: sample, now: time) { cues.append(Cue(time: time, kind: .summary, text: text)) }
        }
        return cues
    }

    /// The summary's sentences, or nil when none of its items is known yet.
    private func summary(at sample: TrackSample, now: Timestamp? = nil) -> String? {
        let time = now ?? sample.time
        var parts: [String] = []
        for item in configuration.summaryItems {
            switch item {
            case .distance:
                parts.append("\(phrases.distance(sample.distance)).")
            case .elapsedTime:
                if let start = runStart { parts.append("Time \(phrases.duration(time.seconds(since: start))).") }
            case .averagePace:
                if sample.distance >= 100, sample.movingTime > 0 {
                    parts.append("Average pace \(phrases.pace(secondsPerKm: sample.movingTime / sample.distance * 1000)).")
                }
            case .currentPace:
                if sample.moving, sample.speed >= 0.5 { parts.append("Current pace \(phrases.pace(secondsPerKm: 1000 / sample.speed)).") }
            case .splitPace:
                if let pace = lastSplit?.pacePerKm { parts.append("Last split \(phrases.pace(secondsPerKm: pace)).") }
            case .heartRate:
                if let bpm = currentHeartRate(at: time) { parts.append("Heart rate \(bpm).") }
            case .heartRateZone:
                if let bpm = currentHeartRate(at: time), zones.zone(of: bpm) > 0 { parts.append("Zone \(zones.zone(of: bpm)).") }
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    private func currentHeartRate(at time: Timestamp) -> Int? {
        guard let last = lastHeartRate, !heartRateLost, time.seconds(since: last.time) <= configuration.heartRateLostAfterSeconds else { return nil }
        return last.bpm
    }

    private func splitText(_ split: Split) -> String {
        let unit: String
        if abs(split.distance - 1000) < 1 && configuration.units == .metric {
            unit = "Kilometre"
        } else if abs(split.distance - 1609.344) < 1 && configuration.units == .imperial {
            unit = "Mile"
        } else {
            unit = "Split"
        }
        return "\(unit) \(split.index) in \(phrases.duration(split.time))."
    }
}

extension Coach {
    /// The spoken readiness check: "GPS 3D fix. Heart rate 72. Battery 80 percent. 3 runs waiting
    /// for upload. Today: 6 by 400 metres." GPS and heart rate are always said, unknown or not, so
    /// silence never means "fine"; the battery and the uploads only when known (a Pi often has no
    /// battery gauge); the planned session a start would take, when one is planned today.
    public static func readiness(at time: Timestamp, gps: String, heartRate: HeartRateReading,
                                 batteryPercent: Int?, runsWaiting: Int?, plannedToday: String? = nil) -> Cue {
        var parts = [gps.hasSuffix(".") ? gps : gps + "."]
        switch heartRate {
        case .live(let bpm, _, _): parts.append("Heart rate \(bpm).")
        case .disconnected: parts.append("No heart rate strap.")
        case .noContact: parts.append("Heart rate strap has no skin contact.")
        case .noData, .stale: parts.append("No heart rate yet.")
        }
        if let batteryPercent { parts.append("Battery \(batteryPercent) percent.") }
        if let runsWaiting {
            parts.append(runsWaiting == 0 ? "All runs uploaded."
                : runsWaiting == 1 ? "1 run waiting for upload." : "\(runsWaiting) runs waiting for upload.")
        }
        if let plannedToday { parts.append("Today: \(plannedToday)" + (plannedToday.hasSuffix(".") ? "" : ".")) }
        return Cue(time: time, kind: .readiness, text: parts.joined(separator: " "))
    }
}
