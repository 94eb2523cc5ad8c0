/// What an alert is about. The raw values are a public vocabulary (replay's `alerts`, the
/// journal's SOS_KIND, the alert JSON): change them only on purpose.
public enum AlertKind: String, Sendable, Equatable, Hashable, CaseIterable {
    /// Heart rate above `hr_high_bpm`, sustained.
    case hrHigh = "hr_high"
    /// Heart rate below `hr_low_bpm`, sustained.
    case hrLow = "hr_low"
    /// The heart-rate signal was lost (no contact, 0 bpm or no notification) right after strong
    /// evidence of a failing heart: a confirmed breach, or a steep fall. How a chest strap
    /// reports cardiac arrest (VitalsWatcher documents the rule).
    case hrSignalLost = "hr_signal_lost"
    /// While a run records: the heart-rate signal is lost and the runner does not move, and
    /// nobody answered "Are you OK?".
    case noSignalNoMotion = "no_signal_no_motion"
    /// A very long button press or `pacerctl sos raise`.
    case manual
    /// `pacerctl sos test`: the whole path, marked as a test, alarming nobody.
    case test
}
