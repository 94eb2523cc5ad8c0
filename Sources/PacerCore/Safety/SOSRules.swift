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
    /// While an alert is open: a follow-up with the position every this many seconds, for at
    /// most `followUpForSeconds` after it was raised.
    public var followUpEverySeconds = 60.0
    public var followUpForSeconds = 1800.0

    /// The longest confirmation window that still leaves time to record and dispatch.
    public static let maximumConfirmWindowSeconds = 4.5
    /// The trend reported with an alert is over this many seconds of samples.
    public static let trendWindowSeconds = 30.0

    public init() {}

    /// The threshold a kind is judged against, for messages.
    public func threshold(for kind: AlertKind) -> Int? {
        switch kind {
        case .hrHigh: highBpm
        case .hrLow: lowBpm
        case .noSignalNoMotion, .manual, .test: nil
        }
    }
}
