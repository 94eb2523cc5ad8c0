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

    /// Which lane of the speech arbiter the cue takes.
    public var priority: CuePriority {
        switch self {
        case .sos, .sosAnswer: .sos
        case .gpsLost, .gpsBack, .hrLost, .hrBack, .batteryLow, .storageFull: .safety
        case .step, .speedUp, .slowDown, .onTarget, .runState, .message, .notice: .workout
        case .summary, .split, .readiness: .summary
        }
    }

    /// How long (seconds) a cue may wait for the speaker before it is dropped rather than read
    /// late: "speed up" said 20 s later is wrong, a lost GPS is still news after 30 s.
    public var lifetimeSeconds: Double {
        switch self {
        // A notice waits its turn however long: it is offered one at a time, and said once.
        case .sos, .sosAnswer, .notice: .infinity
        case .gpsLost, .gpsBack, .hrLost, .hrBack, .batteryLow, .storageFull: 30
        case .speedUp, .slowDown, .onTarget: 5
        case .step, .runState, .message, .readiness: 15
        case .summary, .split: 10
        }
    }
}
