import Glibc

/// What one pacer-cloud process lets clients hold open (issue 31): connections in total and per
/// client address, how long a client may take to send a request, how long an idle keep-alive
/// connection stays, and how many long-polls and event streams one device or session holds.
/// Every open connection is a file descriptor; running out of them crashed the process, so the
/// caps are kept under the process's descriptor limit (`fitted(descriptorLimit:)`).
public struct ConnectionLimits: Sendable, Equatable {
    /// Open client connections at once; the next one is answered 503 and closed at accept.
    public var maxConnections: Int
    /// Open connections from one socket peer address. Not applied to trusted proxies, whose
    /// connections carry every client's requests (the total cap and the proxy's own limits hold).
    public var maxConnectionsPerAddress: Int
    /// From accept (or from a keep-alive request's first byte) to the end of its headers.
    public var headerTimeout: Duration
    /// A keep-alive connection with no request in progress is closed after this long.
    public var idleTimeout: Duration
    /// A request body that pauses this long, or has averaged under `minimumBodyRate` bytes a
    /// second once this long has passed, is cut off (the connection closed).
    public var bodyTimeout: Duration
    /// Long-polls (GET /v1/device/answers?wait=) one device holds at once; the next is 429.
    public var longPollsPerDevice: Int
    /// Dashboard event streams (GET /watch/events) one web session holds at once; the next is 429.
    public var streamsPerSession: Int

    /// Descriptors kept for everything but client connections: the database (SQLite files or the
    /// PostgreSQL pool), webhook and SMTP connections, the event loops, logging.
    public static let reservedDescriptors = 256
    /// The slowest average a request body may arrive at, in bytes a second (after `bodyTimeout`).
    public static let minimumBodyRate = 1024
    /// Caps the process would be pointless under: it refuses to start instead.
    public static let minimumConnections = 16

    public static let defaults = ConnectionLimits(
        maxConnections: 4096, maxConnectionsPerAddress: 256, headerTimeout: .seconds(10), idleTimeout: .seconds(75),
        bodyTimeout: .seconds(30), longPollsPerDevice: 4, streamsPerSession: 4)

    public init(maxConnections: Int, maxConnectionsPerAddress: Int, headerTimeout: Duration, idleTimeout: Duration,
                bodyTimeout: Duration, longPollsPerDevice: Int, streamsPerSession: Int) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.longPollsPerDevice = longPollsPerDevice
        self.streamsPerSession = streamsPerSession
    }

    /// The descriptor limit the caps need: every connection plus the reserve.
    public var descriptorsNeeded: Int { maxConnections + Self.reservedDescriptors }

    /// The limits under a descriptor limit: unchanged when they fit, else the connection caps
    /// lowered to fit, with the line to log; nil (and the reason) when even `minimumConnections`
    /// does not fit.
    public func fitted(descriptorLimit: Int) -> (limits: ConnectionLimits?, message: String?) {
        if descriptorsNeeded <= descriptorLimit { return (self, nil) }
        let available = descriptorLimit - Self.reservedDescriptors
        guard available >= Self.minimumConnections else {
            return (nil, "the open-file limit (RLIMIT_NOFILE) is \(descriptorLimit): too low for even \(Self.minimumConnections) connections "
                + "with \(Self.reservedDescriptors) descriptors kept for the database and outgoing connections; raise it (LimitNOFILE= in the unit)")
        }
        var lowered = self
        lowered.maxConnections = available
        lowered.maxConnectionsPerAddress = min(maxConnectionsPerAddress, available)
        return (lowered, "max-connections \(maxConnections) needs an open-file limit (RLIMIT_NOFILE) of \(descriptorsNeeded), the process has "
            + "\(descriptorLimit): lowered to \(available) (per address \(lowered.maxConnectionsPerAddress)); raise LimitNOFILE= in the unit to keep it")
    }

    /// Problems with the values themselves (the option named), for `serve` to refuse.
    public var problems: [String] {
        var problems: [String] = []
        if !(Self.minimumConnections...1_000_000).contains(maxConnections) {
            problems.append("--max-connections must be \(Self.minimumConnections) to 1000000, not \(maxConnections)")
        }
        if !(1...1_000_000).contains(maxConnectionsPerAddress) {
            problems.append("--max-connections-per-address must be 1 to 1000000, not \(maxConnectionsPerAddress)")
        }
        for (name, value) in [("--header-timeout", headerTimeout), ("--idle-timeout", idleTimeout), ("--body-timeout", bodyTimeout)]
        where !(Duration.milliseconds(100)...Duration.seconds(3600)).contains(value) {
            let seconds = Double(value.components.seconds) + Double(value.components.attoseconds) / 1e18
            problems.append("\(name) must be 0.1 to 3600 seconds, not \(seconds)")
        }
        if !(1...100).contains(longPollsPerDevice) { problems.append("--long-polls-per-device must be 1 to 100, not \(longPollsPerDevice)") }
        if !(1...100).contains(streamsPerSession) { problems.append("--streams-per-session must be 1 to 100, not \(streamsPerSession)") }
        return problems
    }
}

/// The process's open-file limit (RLIMIT_NOFILE).
public enum DescriptorLimit {
    /// Raises the soft limit to the hard one (systemd's LimitNOFILE= sets both; a shell's
    /// `ulimit -n` often leaves the soft one at 1024 under a far higher hard one) and returns the
    /// soft limit in force afterwards.
    @discardableResult
    public static func raiseSoftToHard() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY (never for NOFILE on Linux, but cheap to handle) as "plenty".
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }
}
