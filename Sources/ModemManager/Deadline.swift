import Systemd

/// The time one SMS operation may take, shared by its D-Bus calls, and how their failures read.
struct Deadline {
    let limit: Duration
    private let start = ContinuousClock.now

    init(limit: Duration) {
        self.limit = limit
    }

    var elapsed: Duration { ContinuousClock.now - start }

    /// What is left for the next call; none left is a timeout.
    func remaining() throws(SMSError) -> Duration {
        let left = limit - elapsed
        guard left > .zero else { throw .timedOut(limit) }
        return left
    }

    /// The bus closing, ModemManager missing and our own timeout mean the same at every step;
    /// anything else is the step's own failure.
    func mapped(_ error: BusError, _ failure: (BusError) -> SMSError) -> SMSError {
        if error.isClosed { return .busClosed }
        if error.isServiceUnknown { return .modemManagerNotRunning }
        // sd-bus reports its own timeout as NoReply, which dbus-daemon also sends when the callee
        // leaves the bus without answering: only the former is ours.
        if error.isTimeout && elapsed + .milliseconds(100) >= limit { return .timedOut(limit) }
        return failure(error)
    }
}
