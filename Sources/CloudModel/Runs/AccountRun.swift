/// A complete run of one of an account's devices.
public struct AccountRun: Sendable, Equatable {
    public var deviceID: String
    public var summary: StoredSummary

    public init(deviceID: String, summary: StoredSummary) {
        self.deviceID = deviceID
        self.summary = summary
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
