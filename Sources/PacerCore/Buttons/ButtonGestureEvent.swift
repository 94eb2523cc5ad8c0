/// One recognised gesture of one key.
public struct ButtonGestureEvent: Sendable, Equatable {
    /// The evdev key code (linux/input-event-codes.h), e.g. 28 for KEY_ENTER, 256 for BTN_0.
    public var keyCode: UInt16
    public var gesture: ButtonGesture
    /// When the gesture was complete on the monotonic clock of the key events: the release for
    /// short and long presses, the moment `veryLongPress` passed for a very long one.
    public var time: Duration
    /// How long the key was held (for a very long press: `veryLongPress`).
    public var heldFor: Duration

    public init(keyCode: UInt16, gesture: ButtonGesture, time: Duration, heldFor: Duration) {
        self.keyCode = keyCode
        self.gesture = gesture
        self.time = time
        self.heldFor = heldFor
    }
}
