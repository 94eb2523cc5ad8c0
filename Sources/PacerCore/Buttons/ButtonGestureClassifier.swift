/// Turns key presses and releases into gestures: short, long and very long presses, one key at a
/// time (each key code has its own press; two buttons held together give two gestures).
///
/// Pure: time comes only from the events and from `advance(to:)`. Two things happen without a key
/// event, so the owner must call `advance(to:)` at `nextDeadline`:
/// - a very long press is reported while the key is still held, as soon as `veryLongPress` passes;
/// - a release only counts once the key has stayed up for `debounce` (a bounce back down within
///   that time continues the same press), so short and long presses are reported `debounce` after
///   the release.
///
/// Times never go backwards: an event stamped before the last `advance(to:)` (a tick that ran
/// while the event was on its way) is taken at the time already reached.
public struct ButtonGestureClassifier: Sendable {
    public var configuration: ButtonGestureConfiguration

    /// The time reached so far: the latest event or `advance(to:)`.
    public private(set) var now: Duration?
    private var keys: [UInt16: KeyState] = [:]

    public init(configuration: ButtonGestureConfiguration = ButtonGestureConfiguration()) {
        self.configuration = configuration
    }

    /// Feeds one key event; returns the gestures completed up to and including it, oldest first.
    public mutating func handle(_ event: ButtonKeyEvent) -> [ButtonGestureEvent] {
        let down: Bool
        switch event.action {
        case .press: down = true
        case .release: down = false
        case .autorepeat: return advance(to: event.time)
        }
        var gestures = advance(to: event.time)
        let time = now ?? event.time
        var state = keys[event.keyCode] ?? KeyState()
        // A repeated press or a release of a key never seen down is not a change.
        guard state.rawDown != down else { return gestures }
        state.rawDown = down
        state.lastEdge = time
        keys[event.keyCode] = state
        // With no debounce a change settles at once.
        gestures += settle(event.keyCode, at: time)
        return gestures
    }

    /// Moves time forward without a key event; returns the gestures completed by then, oldest first.
    public mutating func advance(to time: Duration) -> [ButtonGestureEvent] {
        let reached = max(time, now ?? time)
        now = reached
        var gestures: [ButtonGestureEvent] = []
        for code in keys.keys.sorted() {
            gestures += settle(code, at: reached)
        }
        // Stable order across keys, so the result does not depend on dictionary order.
        return gestures.sorted { ($0.time, $0.keyCode) < ($1.time, $1.keyCode) }
    }

    /// The earliest time at which `advance(to:)` may report something (nil: nothing pending). The
    /// owner schedules a wake-up for it; waking early or late is harmless.
    public var nextDeadline: Duration? {
        var earliest: Duration?
        for state in keys.values {
            let due: Duration?
            if state.rawDown, !state.stableDown {
                // Nothing is reported when a press settles; the next news is the very long press.
                due = state.lastEdge + max(configuration.debounce, configuration.veryLongPress)
            } else if !state.rawDown, state.stableDown {
                due = state.lastEdge + configuration.debounce
            } else if state.stableDown, !state.veryLongFired, let start = state.pressStart {
                due = start + configuration.veryLongPress
            } else {
                due = nil
            }
            if let due, earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }

    /// True while any key is held (or its release is not settled yet).
    public var isAnyKeyDown: Bool { keys.values.contains { $0.rawDown || $0.stableDown } }

    /// Forgets every key, e.g. when the device went away or the kernel dropped events: a press in
    /// progress then gives no gesture, and its release is ignored.
    public mutating func reset() {
        keys.removeAll()
    }

    // MARK: Per key

    private struct KeyState {
        /// The last state reported by the device.
        var rawDown = false
        /// When `rawDown` last changed.
        var lastEdge: Duration = .zero
        /// The state after debouncing.
        var stableDown = false
        /// When the current (debounced) press began.
        var pressStart: Duration?
        var veryLongFired = false
    }

    private mutating func settle(_ code: UInt16, at time: Duration) -> [ButtonGestureEvent] {
        guard var state = keys[code] else { return [] }
        var gestures: [ButtonGestureEvent] = []
        if state.rawDown != state.stableDown, time >= state.lastEdge + configuration.debounce {
            state.stableDown = state.rawDown
            if state.stableDown {
                state.pressStart = state.lastEdge
                state.veryLongFired = false
            } else {
                if let start = state.pressStart, !state.veryLongFired {
                    let held = state.lastEdge - start
                    let gesture: ButtonGesture = held < configuration.longPress ? .shortPress : .longPress
                    gestures.append(ButtonGestureEvent(keyCode: code, gesture: gesture, time: state.lastEdge, heldFor: held))
                }
                state.pressStart = nil
                state.veryLongFired = false
            }
        }
        // Only while actually held: a release not yet settled was before the deadline.
        if state.stableDown, state.rawDown, !state.veryLongFired, let start = state.pressStart,
            time >= start + configuration.veryLongPress
        {
            state.veryLongFired = true
            gestures.append(ButtonGestureEvent(
                keyCode: code, gesture: .veryLongPress, time: start + configuration.veryLongPress,
                heldFor: configuration.veryLongPress))
        }
        if !state.rawDown, !state.stableDown {
            keys[code] = nil  // idle: nothing to remember
        } else {
            keys[code] = state
        }
        return gestures
    }
}
