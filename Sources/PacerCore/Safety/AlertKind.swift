/// What an alert is about. The raw values are a public vocabulary (replay's `alerts`, the
/// journal's SOS_KIND, the alert JSON): change them only on purpose.
public enum AlertKind: String, Sendable, Equatable, Hashable, CaseIterable {
    /// Heart rate above `hr_high_bpm`, sustained.
    case hrHigh = "hr_high"
    /// Heart rate below `hr_low_bpm`, sustained.
    case hrLow = "hr_low"
    /// The heart-rate signal turned abnormal (lost, silent, 0 bpm, frozen, above 250, chaotic)
    /// while the body stopped, after strong evidence of a failing heart: a fall, a confirmed
    /// breach, an arrhythmic stretch. How a chest strap reports cardiac arrest (VitalsWatcher
    /// documents the rule).
    case hrSignalLost = "hr_signal_lost"
    /// The heart-rate signal turned abnormal and the body stopped, in a run or not, and nobody
    /// answered "Are you OK?".
    case noSignalNoMotion = "no_signal_no_motion"
    /// A very long button press or `pacerctl sos raise`.
    case manual
    /// `pacerctl sos test`: the whole path, marked as a test, alarming nobody.
    case test
}
