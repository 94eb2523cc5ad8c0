/// A complete run of one of an account's devices.
public struct AccountRun: Sendable, Equatable {
    public var deviceID: String
    public var summary: StoredSummary
    public var activity: RunActivity

    public init(deviceID: String, summary: StoredSummary, activity: RunActivity = RunActivity()) {
        self.deviceID = deviceID
        self.summary = summary
        self.activity = activity
    }
}

/// What a run is beyond its summary (migration 0003's columns of `run`): its sport, its name,
/// why it is not believed, and what recognises it in another file.
public struct RunActivity: Sendable, Equatable {
    public var sport: Sport
    public var title: String?
    /// `RunDoubt`'s reason; nil: believed.
    public var doubt: String?
    /// An imported activity's identity (`ActivityIdentity`); nil for a device's own runs.
    public var identity: String?

    public init(sport: Sport = .run, title: String? = nil, doubt: String? = nil, identity: String? = nil) {
        self.sport = sport
        self.title = title
        self.doubt = doubt
        self.identity = identity
    }
}

/// A distance to run in each week or month (in the account's time zone).
public struct Goal: Sendable, Equatable {
    public enum Period: String, Sendable, CaseIterable {
        case week, month
    }

    public var id: String
    public var accountID: String
    public var period: Period
    public var distanceM: Double

    public init(id: String, accountID: String, period: Period, distanceM: Double) {
        self.id = id
        self.accountID = accountID
        self.period = period
        self.distanceM = distanceM
    }
}
