/// A heart-rate sensor problem: not a medical event, but the watcher is blind while it lasts, so
/// it is a warning (replay's `warnings`, the journal, a spoken notice).
public enum SensorFault: String, Sendable, Equatable, Hashable, CaseIterable {
    /// No notification at all (strap off, out of range, disconnected).
    case noData = "hr_no_data"
    /// Notifications say the strap has no skin contact (or read 0 bpm).
    case noContact = "hr_no_contact"
    /// The same value repeated without RR intervals: a strap replaying its last reading.
    case stale = "hr_stale"
    /// SOS is on and no strap has sent anything since monitoring started.
    case noStrap = "hr_no_strap"
    /// Notifications arrive, but too few valid ones (a slow strap, contact that flickers) to
    /// confirm a breach within the 5 s deadline.
    case insufficient = "hr_insufficient"
    /// The heart signal turned abnormal (no contact, silent, 0 bpm, frozen, above 250 bpm,
    /// chaotic) while the runner keeps moving: a strap fault, never an emergency.
    case abnormal = "hr_signal_abnormal"
}
