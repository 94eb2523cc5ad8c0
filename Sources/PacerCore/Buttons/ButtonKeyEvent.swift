/// A key going down or up, as evdev reports it (an EV_KEY event).
///
/// `time` is an instant on a monotonic clock (CLOCK_MONOTONIC on Linux), as the duration since that
/// clock's origin. Wall or GPS time would not do: the system clock of a Pi without a real-time
/// clock can step while a key is held.
public struct ButtonKeyEvent: Sendable, Equatable {
    public enum Action: Sendable, Hashable {
        case press, release
        /// The kernel's key repeat while held. It says nothing new about the press, so it is ignored.
        case autorepeat

        /// evdev's value field: 0 release, 1 press, 2 autorepeat; anything else is not a key action.
        public init?(evdevValue: Int32) {
            switch evdevValue {
            case 0: self = .release
            case 1: self = .press
            case 2: self = .autorepeat
            default: return nil
            }
        }
    }

    public var keyCode: UInt16
    public var action: Action
    public var time: Duration

    public init(keyCode: UInt16, action: Action, time: Duration) {
        self.keyCode = keyCode
        self.action = action
        self.time = time
    }
}
