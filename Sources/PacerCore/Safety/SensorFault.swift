/// A heart-rate sensor problem: not a medical event, but the watcher is blind while it lasts, so
/// it is a warning (replay's `warnings`, the journal, a spoken notice).
public enum SensorFault: String, Sendable, Equatable, Hashable, CaseIterable {
    /// No notification at all (strap off, out of range, disconnected).
    case noData = "hr_no_data"
    /// Notifications say the strap has no skin contact (or read 0 bpm).
    case noContact = "hr_no_contact"
    /// The same value repeated without RR intervals: a strap replaying its last reading.
    case stale = "hr_stale"
}
