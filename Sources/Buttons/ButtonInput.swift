/// What the button reader reports.
public enum ButtonInput: Sendable, Equatable {
    case key(EvdevKeyEvent)
    /// The device is open and being read. `kernelTimestamps`: key times are the kernel's own
    /// (CLOCK_MONOTONIC through EVIOCSCLOCKID); otherwise they are the read times.
    case deviceOpened(path: String, kernelTimestamps: Bool)
    /// The device cannot be opened (not plugged in yet, no permission) or went away. The reader
    /// keeps retrying; this is reported once per cause, not on every retry, so it can be logged
    /// as it comes.
    case deviceUnavailable(path: String, reason: String)
    /// The kernel's event buffer overflowed (SYN_DROPPED) and key events were lost: forget any
    /// press in progress (`ButtonGestureClassifier.reset()`).
    case eventsDropped
}
