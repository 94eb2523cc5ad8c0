/// What the runner did with a button. The daemon decides what each one means (start, lap, stop,
/// SOS); the core only tells them apart.
public enum ButtonGesture: Sendable, Hashable, CustomStringConvertible {
    /// Pressed and released before `longPress`.
    case shortPress
    /// Released after `longPress` but before `veryLongPress`.
    case longPress
    /// Still held when `veryLongPress` passed. Reported at that moment, not on release, so an SOS
    /// does not wait for the runner to let go; the release that follows reports nothing.
    case veryLongPress

    public var description: String {
        switch self {
        case .shortPress: "short press"
        case .longPress: "long press"
        case .veryLongPress: "very long press"
        }
    }
}
