import Threads
import Glibc
import Synchronization

/// Reads button presses from an evdev device (/dev/input/event*) on its own thread and hands them
/// out through `inputs`. A blocking read has no place on the cooperative pool (2 threads on a Pi).
///
/// A device that is missing (not plugged in yet) or goes away is retried with backoff; each cause
/// is reported once as `.deviceUnavailable`, and `.deviceOpened` follows when it is back. The
/// device is not grabbed (EVIOCGRAB): other readers, such as logind for a power key, keep seeing it.
///
/// Use: `start()`, consume `inputs`, `stop()`. The stream finishes once the thread has ended;
/// ending the consuming loop (or cancelling its task) stops the reader too, and so does releasing
/// the reader, so keep it while consuming. One start per reader: after a stop, make a new one.
public final class EvdevButtonReader: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The evdev device, e.g. /dev/input/by-path/platform-gpio-keys-event. A FIFO works too
        /// (tests); it is reopened when its writer closes.
        public var devicePath: String
        /// The key codes passed on (linux/input-event-codes.h); other keys and event types are
        /// dropped on the reader's thread.
        public var keyCodes: Set<UInt16>
        /// The first retry after a failed open or a lost device...
        public var firstRetryDelay: Duration
        /// ...doubling up to this.
        public var maximumRetryDelay: Duration

        public init(
            devicePath: String,
            keyCodes: Set<UInt16> = [28, 256],  // KEY_ENTER, BTN_0
            firstRetryDelay: Duration = .milliseconds(100),
            maximumRetryDelay: Duration = .seconds(2)
        ) {
            self.devicePath = devicePath
            self.keyCodes = keyCodes
            self.firstRetryDelay = firstRetryDelay
            self.maximumRetryDelay = maximumRetryDelay
        }
    }

    public let configuration: Configuration
    public let inputs: AsyncStream<ButtonInput>

    private let continuation: AsyncStream<ButtonInput>.Continuation
    private let wake: WakeChannel
    private let started = Mutex(false)

    public init(configuration: Configuration) {
        self.configuration = configuration
        // Keep the newest when the consumer stalls: losing an old press only loses a gesture,
        // while losing a release would leave a key "held" and end in a very long press (SOS).
        (inputs, continuation) = AsyncStream.makeStream(of: ButtonInput.self, bufferingPolicy: .bufferingNewest(1024))
        wake = WakeChannel()
        let wake = self.wake
        continuation.onTermination = { _ in wake.signal() }
    }

    deinit {
        wake.signal()
    }

    /// Starts the reading thread. Calls after the first do nothing.
    public func start() {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return }
        guard wake.isOpen else {
            continuation.yield(.deviceUnavailable(path: configuration.devicePath, reason: "cannot create the reader's wake-up socket"))
            continuation.finish()
            return
        }
        let loop = ReadLoop(configuration: configuration, continuation: continuation, wake: wake)
        do {
            try DetachedThread.start { loop.run() }
        } catch {
            continuation.yield(.deviceUnavailable(path: configuration.devicePath, reason: "reader: \(error)"))
            continuation.finish()
        }
    }

    /// Ends the reading thread promptly (it wakes from any wait); `inputs` then finishes.
    /// Safe to call more than once, and before `start()`.
    public func stop() {
        wake.signal()
        // Never started: no thread will finish the stream.
        let neverStarted = started.withLock { started in
            defer { started = true }
            return !started
        }
        if neverStarted { continuation.finish() }
    }
}

func errorDescription(_ code: Int32) -> String {
    String(cString: strerror(code))
}
