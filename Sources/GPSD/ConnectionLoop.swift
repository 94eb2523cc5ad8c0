import Threads
internal import CGPS
import Glibc

/// The body of the client's thread: connect, read lines until the connection is lost, retry with
/// backoff, until stopped. Owns libgps' state; nothing else touches it.
final class ConnectionLoop {
    private let configuration: GPSDClient.Configuration
    private let control: ConnectionControl
    private let outlet: EventOutlet
    private let counters: StatisticsCounters
    /// Whether the consumer was last told `.disconnected`, so failing retries stay quiet.
    private var reportedDisconnected = false

    /// Longer than libgps' own line buffer (2 × GPS_JSON_RESPONSE_MAX = 8 KiB in 3.22), so
    /// gps_read's strlcpy never cuts a line it can return.
    private static let messageCapacity = 16 * 1024
    /// Upper bound of one wait, so pending events are flushed to a consumer that caught up.
    private static let waitSlice: Duration = .seconds(1)

    init(
        configuration: GPSDClient.Configuration, control: ConnectionControl, outlet: EventOutlet,
        counters: StatisticsCounters
    ) {
        self.configuration = configuration
        self.control = control
        self.outlet = outlet
        self.counters = counters
    }

    func run() {
        Self.blockSIGPIPE()
        // One gps_data_t (about 24 KB) for the thread's life, zeroed before every gps_open.
        let size = MemoryLayout<gps_data_t>.size
        let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<gps_data_t>.alignment)
        let gps = raw.bindMemory(to: gps_data_t.self, capacity: 1)
        let message = UnsafeMutablePointer<CChar>.allocate(capacity: Self.messageCapacity)
        defer {
            message.deallocate()
            raw.deallocate()
            outlet.flushPending()
            outlet.finish()
            control.markRunning(false)
        }

        var delay = configuration.firstRetryDelay
        while !stopping {
            if let lost = connectAndRead(gps, message: message, raw: raw, size: size) {
                reportDisconnected(lost.reason)
                if lost.wasConnected { delay = configuration.firstRetryDelay }
                // Not at once even after a loss: a gpsd that is restarting refuses for a moment.
                if pause(delay) { break }
                if !lost.wasConnected { delay = min(delay * 2, configuration.maximumRetryDelay) }
            }
        }
    }

    private struct Loss {
        var reason: String
        /// The connection got as far as `.connected`: the backoff starts over.
        var wasConnected: Bool
    }

    /// One connection from gps_open to gps_close; why it ended, or nil when stopped.
    private func connectAndRead(
        _ gps: UnsafeMutablePointer<gps_data_t>, message: UnsafeMutablePointer<CChar>,
        raw: UnsafeMutableRawPointer, size: Int
    ) -> Loss? {
        guard (1...65535).contains(configuration.port) else {
            return Loss(reason: "cannot connect to gpsd at \(endpoint): \(configuration.port) is not a TCP port (1-65535)", wasConnected: false)
        }
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        guard gps_open(configuration.host, String(configuration.port), gps) == 0 else {
            // gps_open puts libgps' netlib code (NL_NOHOST, NL_NOCONNECT, …) into errno.
            return Loss(reason: "cannot connect to gpsd at \(endpoint): \(String(cString: gps_errstr(errno)))", wasConnected: false)
        }
        guard control.adopt(socket: gps.pointee.gps_fd) else {
            _ = gps_close(gps)
            return nil
        }
        defer { control.closeConnection { _ = gps_close(gps) } }
        guard gps_stream(gps, UInt32(WATCH_ENABLE | WATCH_JSON), nil) == 0 else {
            return Loss(reason: "cannot send WATCH to gpsd at \(endpoint): \(Self.errorText(errno))", wasConnected: false)
        }
        counters.connections.add(1, ordering: .relaxed)
        reportedDisconnected = false
        outlet.send(.connected(atNs: MonotonicTime.nanoseconds()))
        guard let reason = readLines(gps, into: message), !stopping else { return nil }
        return Loss(reason: reason, wasConnected: true)
    }

    /// Reads until the connection is lost (returns why) or the client is stopped (returns nil).
    private func readLines(_ gps: UnsafeMutablePointer<gps_data_t>, into message: UnsafeMutablePointer<CChar>) -> String? {
        let socket = gps.pointee.gps_fd
        // gps_waiting puts the socket in an fd_set for select(2): past FD_SETSIZE glibc aborts the
        // whole process rather than fail the call. A process with that many descriptors open
        // gets the connection refused here, and tries again after the backoff.
        guard socket >= 0, socket < FD_SETSIZE else {
            return "the gpsd socket is descriptor \(socket), past the \(FD_SETSIZE) that libgps' select(2) can watch: too many files open"
        }
        while true {
            if stopping { return nil }
            // gps_waiting is true at once while libgps holds unread data in its own buffer,
            // which poll(2) on the socket cannot see; so ask it first, without waiting.
            errno = 0
            if !gps_waiting(gps, 0) {
                if errno != 0 && errno != EINTR {
                    return "waiting for gpsd at \(endpoint) failed: \(Self.errorText(errno))"
                }
                switch waitForInput(socket) {
                case .stopped: return nil
                case .timedOut:
                    outlet.flushPending()
                    continue
                case .ready: break
                }
            }
            errno = 0
            let count = gps_read(gps, message, Int32(Self.messageCapacity))
            let receivedNs = MonotonicTime.nanoseconds()
            if count < 0 {
                if stopping { return nil }
                // libgps: -1 with errno set is a read error, without it gpsd closed the socket.
                return errno == 0
                    ? "gpsd at \(endpoint) closed the connection"
                    : "reading from gpsd at \(endpoint) failed: \(Self.errorText(errno))"
            }
            if count == 0 { continue }  // part of a line only, or EINTR
            outlet.send(.line(Self.line(message), receivedNs: receivedNs))
            if outlet.isTerminated { return nil }
        }
    }

    private enum WaitResult { case ready, timedOut, stopped }

    private func waitForInput(_ socket: Int32) -> WaitResult {
        var entries = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: control.wake.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        let result = poll(&entries, 2, MonotonicTime.pollMilliseconds(Self.waitSlice))
        if result < 0 { return .timedOut }  // EINTR: look again
        if entries[1].revents != 0 { return .stopped }
        // POLLHUP and POLLERR too: gps_read then reports the loss.
        return entries[0].revents != 0 ? .ready : .timedOut
    }

    /// Waits `delay` or until stopped (true), flushing pending events meanwhile.
    private func pause(_ delay: Duration) -> Bool {
        var left = delay
        while left > .zero {
            let slice = min(left, Self.waitSlice)
            if control.wake.wait(timeout: slice) { return true }
            left -= slice
            outlet.flushPending()
        }
        return stopping
    }

    private func reportDisconnected(_ reason: String) {
        guard !reportedDisconnected else { return }
        reportedDisconnected = true
        outlet.send(.disconnected(reason: reason, atNs: MonotonicTime.nanoseconds()))
    }

    private var stopping: Bool { outlet.isTerminated || control.isStopRequested }

    private var endpoint: String { "\(configuration.host):\(configuration.port)" }

    /// The line gps_read copied out, NUL-terminated, with gpsd's CR (libgps cut at the LF).
    private static func line(_ message: UnsafeMutablePointer<CChar>) -> String {
        var length = strlen(message)
        message.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            while length > 0, bytes[length - 1] == 0x0D || bytes[length - 1] == 0x0A { length -= 1 }
        }
        return message.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
        }
    }

    private static func errorText(_ code: Int32) -> String {
        code == 0 ? "unknown error" : String(cString: strerror(code))
    }

    /// libgps writes with write(2), not send(MSG_NOSIGNAL): a gpsd that closed just as the
    /// WATCH goes out would raise SIGPIPE and kill the process. Blocked on this thread only,
    /// the signal stays pending here and write returns EPIPE instead.
    private static func blockSIGPIPE() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}
