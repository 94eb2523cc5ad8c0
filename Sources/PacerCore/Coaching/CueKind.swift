/// What a spoken cue is about. The raw values are a public vocabulary: `pacerctl replay` lists
/// cues by them and the README documents them, so change them only on purpose.
public enum CueKind: String, Sendable, Equatable, Hashable, CaseIterable {
    /// The periodic summary (every N km and/or M minutes).
    case summary
    /// A split completed.
    case split
    /// A workout step begins (or the workout ends).
    case step
    /// Corrective workout cues: outside the step's target, and back inside it.
    case speedUp = "speed_up"
    case slowDown = "slow_down"
    case onTarget = "on_target"
    case gpsLost = "gps_lost"
    case gpsBack = "gps_back"
    case hrLost = "hr_lost"
    case hrBack = "hr_back"
    /// The strap's or the device's own battery is low.
    case batteryLow = "battery_low"
    /// The run can no longer be saved (disk full).
    case storageFull = "storage_full"
    /// Run started, paused, resumed or stopped.
    case runState = "run_state"
    /// The spoken readiness check (GPS, heart rate, battery, uploads waiting).
    case readiness
    /// Emergency alerts and their confirmations (issue #7).
    case sos
    /// A monitor's answer to an open alert ("Anna is on the way"), at SOS priority (issue 22).
    case sosAnswer = "sos_answer"
    /// A sentence asked for by a person (`pacerctl speak`).
    case message
    /// A notice from the cloud (`pacer-cloud notice send`), said once.
    case notice
    /// Races (issue #34): a distance-to-go cue point ("5 kilometres to go.").
    case raceToGo = "race_to_go"
    /// Off the race's course (more than 50 m for 15 s), and back on it.
    case offCourse = "off_course"
    case backOnCourse = "back_on_course"
    /// The arrival crossed: gun and net time.
    case raceFinish = "race_finish"
    /// The runner's place, as the cloud sends it ("You are 12th.").
    case racePlace = "race_place"

    /// Which lane of the speech arbiter the cue takes.
    public var priority: CuePriority {
        switch self {
        case .sos, .sosAnswer: .sos
        // Off course costs the race: heard even when the coach is muted.
        case .gpsLost, .gpsBack, .hrLost, .hrBack, .batteryLow, .storageFull, .offCourse, .backOnCourse: .safety
        case .step, .speedUp, .slowDown, .onTarget, .runState, .message, .notice, .raceFinish: .workout
        case .summary, .split, .readiness, .raceToGo, .racePlace: .summary
        }
    }

    /// How long (seconds) a cue may wait for the speaker before it is dropped rather than read
    /// late: "speed up" said 20 s later is wrong, a lost GPS is still news after 30 s.
    public var lifetimeSeconds: Double {
        switch self {
        // A notice waits its turn however long: it is offered one at a time, and said once.
        case .sos, .sosAnswer, .notice: .infinity
        case .gpsLost, .gpsBack, .hrLost, .hrBack, .batteryLow, .storageFull, .offCourse, .backOnCourse: 30
        case .speedUp, .slowDown, .onTarget: 5
        case .step, .runState, .message, .readiness, .raceToGo: 15
        case .summary, .split: 10
        // The result is still news a minute later; a place is soon replaced by a newer one.
        case .raceFinish: 60
        case .racePlace: 30
        }
    }
}
