/// Timing of button gestures. Defaults match config/pacer.toml's `[buttons]` section.
public struct ButtonGestureConfiguration: Sendable, Equatable {
    /// A key must stay in a new state this long before the change counts: contact bounce of a
    /// mechanical switch lasts a few milliseconds and must not read as extra presses, and a press
    /// shorter than this is noise, not a press.
    public var debounce: Duration
    /// Released before this: a short press (start a run, or a lap). Released after: a long press
    /// (stop). A lap is cheap and a stop is not, so the threshold leans towards "short".
    public var longPress: Duration
    /// Held this long: a very long press, reported while the key is still down (reserved for SOS).
    /// It should be longer than `longPress`; if not, long presses cannot happen.
    public var veryLongPress: Duration

    public init(
        debounce: Duration = .milliseconds(30),
        longPress: Duration = .milliseconds(1500),
        veryLongPress: Duration = .seconds(5)
    ) {
        self.debounce = debounce
        self.longPress = longPress
        self.veryLongPress = veryLongPress
    }
}
