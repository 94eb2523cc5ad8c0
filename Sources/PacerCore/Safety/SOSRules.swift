/// When the SOS watcher raises an alert or a warning (`[sos]`; documented in config/pacer.toml).
public struct SOSRules: Sendable, Equatable {
    /// Off: nothing is watched and nothing is raised, a manual SOS included.
    public var enabled = false
    /// A heart rate above this (bpm) is out of range.
    public var highBpm = 200
    /// A heart rate below this (bpm) is out of range. 0 bpm is never a heart rate: it is how a
    /// strap says it has no skin contact, a sensor fault.
    public var lowBpm = 35
    /// A breach is confirmed when, within the last `confirmWindowSeconds`, at least
    /// `confirmSamples` valid samples are out of range, they are the majority, and the newest one
    /// is. One artefact never confirms; a value wavering on the threshold still does. The window
    /// plus dispatch must fit in the 5 s deadline, so it is at most 4.5 s.
    ///
    /// On a lossy or jittery link (0.6–1.4 s between notifications, 1 in 10 lost) three samples
    /// can take more than 5 s to arrive, so a breach is also confirmed by an episode of at least
    /// two samples, every one out of range, the first and the newest `minimumBreachSeconds` apart:
    /// an artefact is one sample, and two in a row are less than 2 s apart at 1 Hz.
    public var confirmWindowSeconds = 4.0
    public var confirmSamples = 3
    /// An open alert closes, and the watcher re-arms for its kind, once valid samples have been
    /// back in range this long.
    public var rearmSeconds = 30.0
    /// No notification, or no valid reading (no skin contact, 0 bpm), for this long is a sensor
    /// fault: a warning, not an alert.
    public var faultAfterSeconds = 5.0
    /// The same value over and over without RR intervals for this long: a strap repeating its
    /// last reading (stale data).
    public var staleAfterSeconds = 60.0
    /// While a run records: no valid heart-rate signal and no movement for this long is the
    /// "man down" alert.
    public var noSignalNoMotionSeconds = 60.0
    /// "Are you OK?": how long the runner has to answer (button, `pacerctl sos cancel`) before
    /// the "man down" alert goes out.
    public var askTimeoutSeconds = 30.0
    /// While an alert is open: a follow-up with the position every this many seconds, for at
    /// most `followUpForSeconds` after it was raised.
    public var followUpEverySeconds = 60.0
    public var followUpForSeconds = 1800.0

    /// The longest confirmation window that still leaves time to record and dispatch.
    public static let maximumConfirmWindowSeconds = 4.5
    /// The trend reported with an alert is over this many seconds of samples.
    public static let trendWindowSeconds = 30.0
    /// Two out-of-range samples this far apart confirm a breach (see `confirmWindowSeconds`).
    public static let minimumBreachSeconds = 2.0
    /// The budget for confirming a breach: the rest of the 5 s is for recording and dispatch.
    public static let confirmationBudgetSeconds = 4.5

    // `hr_signal_lost`: the rule, in VitalsWatcher's words.
    /// The strong evidence must lie within this many seconds before the signal was lost.
    public static let evidenceWindowSeconds = 10.0
    /// A fall of at least this many bpm, on median-of-3 filtered values, is strong evidence.
    public static let evidenceFallBpm = 30
    /// A lost signal must last this long (no valid reading since) before it counts as lost: one
    /// missed beat of contact is not an arrest.
    public static let lossConfirmSeconds = 2.0
    /// No notification for this long is a silent strap: more than two lost in a row on a jittery
    /// link (three intervals of up to 1.4 s: 4.2 s; at 3 s tools/bench-sos-path saw such gaps
    /// raise false alarms after a fall). The loss is still timed from the notification that was
    /// due next, so at 1 Hz it is raised 3.5 s after the first missing one.
    public static let silenceSeconds = 4.5
    /// After monitoring starts, a strap has this long to be heard before the warning that none is.
    public static let noStrapGraceSeconds = 30.0
    /// `hr_insufficient` looks at the valid samples of this many seconds.
    public static let insufficientWindowSeconds = 20.0

    /// The config's cross-field rule: `confirmSamples` samples at 1 Hz span `confirmSamples - 1`
    /// seconds, which must fit in the window (else only the two-sample rule could ever confirm,
    /// and the setting would be a lie).
    public static func confirmationFits(windowSeconds: Double, samples: Int) -> Bool {
        Double(samples - 1) <= windowSeconds
    }

    public init() {}

    /// The threshold a kind is judged against, for messages.
    public func threshold(for kind: AlertKind) -> Int? {
        switch kind {
        case .hrHigh: highBpm
        case .hrLow: lowBpm
        case .hrSignalLost, .noSignalNoMotion, .manual, .test: nil
        }
    }
}
