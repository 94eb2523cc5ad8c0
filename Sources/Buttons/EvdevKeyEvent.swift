/// One key of interest going down or up (an EV_KEY event with one of the configured codes).
public struct EvdevKeyEvent: Sendable, Equatable {
    /// linux/input-event-codes.h, e.g. 28 KEY_ENTER, 256 BTN_0.
    public var code: UInt16
    /// evdev's value: 1 pressed, 0 released. Autorepeats (2) are not passed on: they say nothing
    /// about when a press began or ended.
    public var value: Int32
    /// CLOCK_MONOTONIC (see `MonotonicTime.now()`): the kernel's timestamp of the event when the
    /// device accepted EVIOCSCLOCKID, otherwise the time it was read.
    public var time: Duration

    public var isPress: Bool { value == 1 }

    public init(code: UInt16, value: Int32, time: Duration) {
        self.code = code
        self.value = value
        self.time = time
    }
}
