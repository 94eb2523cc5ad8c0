import Threads
import Glibc
import Synchronization

/// The live connection to gpsd: a dedicated thread owns libgps (gps_open, gps_stream with
/// WATCH_ENABLE|WATCH_JSON, gps_waiting, gps_read) and hands every raw line out through `events`.
/// Nothing of it runs on the cooperative pool, which has 2 threads on the Pi.
///
/// libgps never reconnects on its own. When gpsd is not up yet or goes away, the thread closes
/// the connection and retries after `firstRetryDelay`, doubling up to `maximumRetryDelay`; each
/// loss is reported once as `.disconnected`, and `.connected` follows when gpsd is back.
///
/// Lines are not decoded here: the daemon decodes them with `GPSDecoder`, exactly as replay does.
///
/// Use: `start()`, consume `events`, `stop()`. The stream finishes once the thread has closed the
/// connection and freed libgps' state; ending the consuming loop (or cancelling its task) stops
/// the client too. One start per client.
public final class GPSDClient: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// gpsd's host name or address; libgps tries every address it resolves to.
        public var host: String
        /// gpsd's TCP port (2947 by default). One outside 1...65535 fails to connect, with the
        /// reason in `.disconnected`.
        public var port: Int
        /// The first retry after a failed connect or a lost connection...
        public var firstRetryDelay: Duration
        /// ...doubling up to this. 1.5 s keeps "reconnected within 2 s of gpsd accepting
        /// connections" true even when the wait started just before gpsd came up.
        public var maximumRetryDelay: Duration
        /// Events the consumer may fall behind by; lines beyond it are dropped and counted
        /// (`.linesDropped`, `statistics.linesDropped`) rather than buffered without bound.
        public var bufferCapacity: Int

        public init(
            host: String = "localhost",
            port: Int = 2947,
            firstRetryDelay: Duration = .milliseconds(100),
            maximumRetryDelay: Duration = .milliseconds(1500),
            bufferCapacity: Int = 4096
        ) {
            self.host = host
            self.port = port
            self.firstRetryDelay = firstRetryDelay
            self.maximumRetryDelay = maximumRetryDelay
            self.bufferCapacity = bufferCapacity
        }
    }

    public let configuration: Configuration
    public let events: AsyncStream<GPSDEvent>

    private let continuation: AsyncStream<GPSDEvent>.Continuation
    private let control = ConnectionControl()
    private let counters = StatisticsCounters()
    private let started = Mutex(false)

    public init(configuration: Configuration) {
        var configuration = configuration
        // Nonsense values would spin (zero delay) or make a stream that holds nothing.
        let millisecond = Duration.milliseconds(1)
        configuration.firstRetryDelay = max(configuration.firstRetryDelay, millisecond)
        configuration.maximumRetryDelay = max(configuration.maximumRetryDelay, configuration.firstRetryDelay)
        configuration.bufferCapacity = max(configuration.bufferCapacity, 1)
        self.configuration = configuration
        (events, continuation) = AsyncStream.makeStream(
            of: GPSDEvent.self, bufferingPolicy: .bufferingOldest(configuration.bufferCapacity))
        let control = self.control
        continuation.onTermination = { _ in control.requestStop() }
    }

    public convenience init(host: String = "localhost", port: Int = 2947) {
        self.init(configuration: Configuration(host: host, port: port))
    }

    deinit {
        control.requestStop()
    }

    /// Counters since the client was created; readable from any thread.
    public var statistics: GPSDClientStatistics { counters.snapshot }

    /// True from `start()` until the thread has closed the connection and freed libgps' state.
    public var isRunning: Bool { control.isRunning }

    /// Starts the client's thread. Calls after the first do nothing.
    public func start() {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return }
        let now = MonotonicTime.nanoseconds()
        guard control.wake.isOpen else {
            continuation.yield(.disconnected(reason: "cannot create the client's wake-up socket", atNs: now))
            continuation.finish()
            return
        }
        let outlet = EventOutlet(continuation: continuation, counters: counters)
        let loop = ConnectionLoop(configuration: configuration, control: control, outlet: outlet, counters: counters)
        control.markRunning(true)
        do {
            try DetachedThread.start { loop.run() }
        } catch {
            control.markRunning(false)
            continuation.yield(.disconnected(reason: "gpsd client: \(error)", atNs: now))
            continuation.finish()
        }
    }

    /// Ends the thread promptly: it wakes from any wait or read, closes the connection with
    /// gps_close and finishes `events`. Returns at once; `isRunning` turns false when it is done.
    /// Safe to call more than once, and before `start()`.
    public func stop() {
        control.requestStop()
        let neverStarted = started.withLock { started in
            defer { started = true }
            return !started
        }
        if neverStarted { continuation.finish() }
    }
}
