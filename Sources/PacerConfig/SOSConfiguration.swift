import PacerCore

/// `[sos]`: the watcher's rules (the core's SOSRules) and where an alert goes.
public struct SOSConfiguration: Sendable, Equatable {
    /// The rules; `rules.enabled` is settled after parsing from `enabledSetting` and the age.
    public var rules = SOSRules()
    /// `enabled` as written; nil: on from `[profile] age` 60 (the spec's default), off below.
    public var enabledSetting: Bool?
    /// `hr_high_bpm` as written; nil: the profile's maximum heart rate plus 15.
    public var highBpmSetting: Int?
    /// Emergency phone numbers, international format ("+393471234567").
    public var contacts: [String] = []
    /// Text the contacts through ModemManager (only with contacts).
    public var sms = true
    /// POST to `{upload.url}/v1/alerts` (only with an upload URL).
    public var https = true
    /// One voice call per alert, after the texts started ("+393471234567", or an emergency short
    /// number such as "112"). nil: no call. Calling 112/911 automatically is the owner's choice.
    public var call: String?
    /// The modem's audio device (ALSA name): the alert is spoken into the call in a loop while
    /// it is active. nil: the call is placed silent.
    public var callAudioDevice: String?
    /// A local command run with the alert's JSON on standard input; exit status 0 acknowledges.
    /// Empty: no hook.
    public var hook: [String] = []
    /// The map link in SMS texts; {lat} and {lon} are replaced.
    public var mapLink = AlertText.defaultMapLink
    /// The name contacts see ("" or unset: the host name).
    public var deviceName: String?
    /// How long one dispatch attempt may take before it counts as failed and is retried.
    public var attemptTimeoutSeconds = 30.0
    /// The longest wait between two attempts on one channel (retries back off up to this).
    public var retryMaxSeconds = 60.0

    public static let enabledFromAge = 60

    public init() {}
}
