/// Which strap to hold on to, and how hard to try.
public struct StrapClientConfiguration: Sendable, Equatable {
    /// The paired strap first, then an optional second one used while the first is missing. Only
    /// these addresses are ever connected: a stranger's strap at a race start is never picked up.
    public var straps: [StrapAddress]
    /// `hci0`; nil takes the first adapter BlueZ lists.
    public var adapter: String?
    public var minimumBackoff: Duration
    /// Capped low: a strap that is back must stream again within 3 s.
    public var maximumBackoff: Duration
    public var connectTimeout: Duration
    /// How long Connect may take to bring ServicesResolved.
    public var resolveTimeout: Duration

    public init(straps: [StrapAddress], adapter: String? = nil, minimumBackoff: Duration = .milliseconds(250),
                maximumBackoff: Duration = .milliseconds(1500), connectTimeout: Duration = .seconds(20),
                resolveTimeout: Duration = .seconds(10)) {
        self.straps = straps
        self.adapter = adapter
        self.minimumBackoff = minimumBackoff
        self.maximumBackoff = maximumBackoff
        self.connectTimeout = connectTimeout
        self.resolveTimeout = resolveTimeout
    }
}
