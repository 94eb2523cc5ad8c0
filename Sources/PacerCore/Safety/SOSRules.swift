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
    /// A frozen strap: the same value with the same RR intervals (or with none, from a strap that
    /// sends them) repeated for this long. A strap that never sends RR intervals is frozen only
    /// after three times as long, since a steady heart often reads the same value for seconds.
    public var staleAfterSeconds = 5.0
    /// A collapse: the body stopped at most this long before the heart signal turned abnormal
    /// (or at most `collapseAfterSeconds` after it). The runner is then asked "Are you OK?" at once.
    public var collapseWindowSeconds = 60.0
    /// "Are you OK?": how long the runner has to answer (button, `pacerctl sos cancel`, or
    /// moving again / the signal coming back) before the alert goes out.
    public var collapseAskSeconds = 10.0
    /// Strong evidence of a failing heart, before its signal turned abnormal: a fall of this share
    /// of the wearer's own recent rate (on median-of-3 filtered values, within
    /// `evidenceWindowSeconds`). With it, a collapse raises the alert at once, with no question.
    public var evidenceShare = 0.3
    /// The fallback when the body had stopped long before the signal turned abnormal (a person
    /// standing or sitting): abnormal signal and no movement for this long, then the question.
    public var noSignalNoMotionSeconds = 60.0
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

    // The collapse rules, in VitalsWatcher's words.
    /// The strong evidence must lie within this many seconds before the signal turned abnormal:
    /// long enough for a fall that takes half a minute, short enough that the recovery after a
    /// run (some 15-25 % in that time) is not a fall of 30 %.
    public static let evidenceWindowSeconds = 40.0
    /// A steep fall: this share of the rate within `steepFallSeconds` (filtered values).
    public static let steepFallShare = 0.2
    public static let steepFallSeconds = 8.0
    /// A slowing heart: the lowest of the last three readings this share below the filtered
    /// highest of the `steepFallSeconds` before. Not strong evidence, but with the body still it
    /// asks "Are you OK?" at once, however long ago the body stopped.
    public static let weakFallShare = 0.1
    /// A rate settled within `lowLevelMarginBpm` above `hr_low_bpm` for `lowLevelSeconds`, and
    /// `lowLevelShare` below the wearer's own level (the median of one filtered value every
    /// `levelEverySeconds` over `levelWindowSeconds`).
    public static let lowLevelMarginBpm = 10
    public static let lowLevelSeconds = 20.0
    public static let lowLevelShare = 0.2
    public static let levelEverySeconds = 10.0
    public static let levelWindowSeconds = 300.0
    /// With strong evidence the alert goes out at once if the body stopped before the signal
    /// turned abnormal, or at most this long after: a heart that fails fells a runner within
    /// seconds, so one who ran on longer with the signal gone had a strap fault.
    public static let collapseAfterSeconds = 15.0
    /// No contact or 0 bpm must last this long (no valid reading since) before the signal counts
    /// as abnormal: contact that flickers for a notification is not an arrest.
    public static let lossConfirmSeconds = 2.0
    /// A strap is silent after this many of its usual intervals without a notification, within
    /// [minimumSilenceSeconds, maximumSilenceSeconds]: at 1 Hz more than two lost in a row on a
    /// jittery link (three intervals of up to 1.4 s: 4.2 s); at 4 Hz two seconds, so a silence is
    /// judged well inside the 5 s. The silence is timed from the notification that was due next.
    public static let silenceIntervals = 4.5
    public static let minimumSilenceSeconds = 2.0
    public static let maximumSilenceSeconds = 4.5
    /// Readings no rhythm produces: a chaotic stretch is at least `chaoticReadings` of them, half
    /// or more of the notifications, within `chaoticWindowSeconds`.
    public static let chaoticWindowSeconds = 5.0
    public static let chaoticReadings = 3
    /// Two readings up to two seconds apart that differ by more than this are incoherent (unless
    /// the second is back near the last coherent one).
    public static let chaoticJumpBpm = 30
    /// A strap not heard for this long, while another one is, has been swapped out.
    public static let strapSwappedSeconds = 30.0
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

    /// How long a strap whose notifications usually come `interval` seconds apart may be silent.
    public static func silenceSeconds(interval: Double) -> Double {
        min(max(silenceIntervals * interval, minimumSilenceSeconds), maximumSilenceSeconds)
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
