import PacerCore

/// What the lane needs of `[sos]` and `[upload]`, without the config module.
public struct LaneSettings: Sendable, Equatable {
    public var rules: SOSRules
    /// SMS targets; empty: no SMS.
    public var contacts: [String]
    /// The alerts endpoint (`{upload.url}/v1/alerts`); nil: no HTTPS.
    public var alertsURL: String?
    /// The hook's argv; empty: no hook.
    public var hook: [String]
    /// One voice call per alert to this number; nil: none.
    public var call: String?
    public var mapLink: String
    public var deviceName: String
    /// Who wears the device (`[profile] name`); nil: not set. Every message names them
    /// (`AlertContent.wearer`, the JSON's `wearer`).
    public var wearerName: String?
    /// The wearer's time zone (`[profile] timezone`, else the system's), in which the texts write
    /// their times (`AlertContent.zone`); nil: UTC, said as such.
    public var wearerZone: ZoneOffsets?
    public var attemptTimeoutSeconds: Double
    public var retryMaxSeconds: Double
    /// `[buttons]` timings: the lane raises on a very long press of its own reading.
    public var buttons: ButtonGestureConfiguration

    public init(rules: SOSRules, contacts: [String] = [], alertsURL: String? = nil, hook: [String] = [], call: String? = nil, mapLink: String = AlertText.defaultMapLink,
                deviceName: String, attemptTimeoutSeconds: Double = 30, retryMaxSeconds: Double = 60,
                buttons: ButtonGestureConfiguration = ButtonGestureConfiguration(), wearerName: String? = nil, wearerZone: ZoneOffsets? = nil) {
        self.rules = rules
        self.contacts = contacts
        self.alertsURL = alertsURL
        self.hook = hook
        self.call = call
        self.mapLink = mapLink
        self.deviceName = deviceName
        self.attemptTimeoutSeconds = attemptTimeoutSeconds
        self.retryMaxSeconds = retryMaxSeconds
        self.buttons = buttons
        self.wearerName = wearerName
        self.wearerZone = wearerZone
    }

    var outbox: Outbox.Settings {
        Outbox.Settings(attemptTimeoutSeconds: attemptTimeoutSeconds, retryMaxSeconds: retryMaxSeconds)
    }

    /// Every (channel, target) a message goes to.
    public var targets: [(channel: AlertChannelName, target: String)] {
        var targets: [(AlertChannelName, String)] = contacts.map { (.sms, $0) }
        if let alertsURL { targets.append((.https, alertsURL)) }
        if let command = hook.first { targets.append((.hook, command)) }
        return targets
    }
}
