/// An alert and its newest message.
public struct StoredAlert: Sendable, Equatable {
    public var alertID: String
    public var device: String
    public var secret: String
    public var state: AlertState
    public var kind: String
    public var test: Bool
    public var createdMs: Int64
    public var latestSequence: Int
    /// The newest message's JSON: the fields this server knows, re-encoded (unknown ones are dropped).
    public var latestJSON: String

    public init(alertID: String, device: String, secret: String, state: AlertState, kind: String, test: Bool,
                createdMs: Int64, latestSequence: Int, latestJSON: String) {
        self.alertID = alertID
        self.device = device
        self.secret = secret
        self.state = state
        self.kind = kind
        self.test = test
        self.createdMs = createdMs
        self.latestSequence = latestSequence
        self.latestJSON = latestJSON
    }
}

/// Where a page of a device's alerts ends (`GET /v1/alerts?before=`): alerts are listed newest
/// first by (created_ms DESC, alert_id), so the next page starts after this pair. On the wire
/// it is "<created_ms>_<alert_id>", opaque to the device.
public struct AlertCursor: Sendable, Equatable {
    public var createdMs: Int64
    public var alertID: String

    public init(createdMs: Int64, alertID: String) {
        self.createdMs = createdMs
        self.alertID = alertID
    }

    public init(after alert: StoredAlert) {
        self.init(createdMs: alert.createdMs, alertID: alert.alertID)
    }

    /// "1764288000000_0f8e…" (openapi.yaml's pattern: 1 to 19 digits, "_", 1 to 64 characters but
    /// NUL, which PostgreSQL cannot take); nil for anything else. Digits beyond Int64 are its
    /// largest: a cursor after every alert.
    public init?(text: String) {
        let parts = text.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, (1...19).contains(parts[0].utf8.count), parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              (1...64).contains(parts[1].unicodeScalars.count), !parts[1].utf8.contains(0) else { return nil }
        self.init(createdMs: Int64(parts[0]) ?? .max, alertID: String(parts[1]))
    }

    public var text: String { "\(createdMs)_\(alertID)" }
}

/// An alert with a bounded part of its messages (`CloudStore.alert(secret:messages:)`).
public struct AlertMessages: Sendable, Equatable {
    public var alert: StoredAlert
    /// The JSON of the first message and of the newest ones, oldest first.
    public var messages: [String]
    /// How many messages the alert has in all (the page says it).
    public var count: Int

    public init(alert: StoredAlert, messages: [String], count: Int) {
        self.alert = alert
        self.messages = messages
        self.count = count
    }
}
