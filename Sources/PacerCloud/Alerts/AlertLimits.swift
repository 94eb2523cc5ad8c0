import CloudModel
import CloudStore
import Hummingbird
import PacerContract
import Synchronization

/// What one alert message may cost the server, and how much of the alerts a read loads (issue
/// 31: 150 alerts with a 1 MiB field made `GET /v1/alerts` a 158 MB answer and the dashboard
/// 1.55 GB). README "Alerts: sizes, pages and rates" says the same numbers.
enum AlertLimits {
    /// A `POST /v1/alerts` body, in bytes (413 above). The largest message the field limits allow
    /// (a 4,096-character SMS of 4-byte characters, every other text at its longest) is about
    /// 20 KB as pacerd writes it, and under 60 KB even with every character \u-escaped.
    static let maxBodyBytes = WireLimits.alertMessageMaxBytes
    /// A message as stored (the known fields re-encoded), in bytes (422 above): at least the
    /// largest valid message, so it never refuses one; it bounds every read of a message.
    static let maxStoredBytes = 32 * 1024

    /// `GET /v1/alerts?limit=`: the default and the most one page holds.
    static let pageDefault = WireLimits.alertsPageDefault
    static let pageMax = WireLimits.alertsPageMax

    /// The alert page (`/a/{secret}`) reads the first message and the newest others, at most
    /// this many (its map shows the newest `AlertPage.mapPositions`).
    static let pageMessages = AlertPage.mapPositions
    /// The dashboard card: the newest open alerts and closed ones shown, the messages of each
    /// (the first and the newest), the newest answers of each.
    static let cardOpenAlerts = 5
    static let cardMessages = 10
    static let answersShown = 20
}

/// Rate limits on alert messages per device, which never refuse a real SOS (issue 31). Always
/// taken: the first message of an alert (a new alert_id: a new episode), the message that
/// closes an open alert (resolved, cancelled) and a repeat of the newest stored message (a
/// retry after a lost answer; the store answers it without storing anything). Every other
/// message (an update: a follow-up, a message of a closed alert, an older sequence) is
/// limited twice: per alert to a burst of 12 and one every 5 s, per device to a burst of 60
/// and one a second; over either, 429 with Retry-After.
///
/// pacerd sends follow-ups every `[sos] follow_up_every_s` (10 s at the least, 60 s by default)
/// and, after an outage, only the newest one, so a device with up to 5 alerts open at the
/// shortest interval stays under both. A 429 is retried like any failure (the SOS lane backs
/// off 1, 2, 4 … s up to `retry_max_s`) and a newer follow-up replaces a refused one.
struct AlertAdmission: Sendable {
    static let perAlert = RateLimit(burst: 12, period: .seconds(60))
    static let perDevice = RateLimit(burst: 60, period: .seconds(60))

    let alertLimiter: RateLimiter
    let deviceLimiter: RateLimiter

    init(now: @escaping @Sendable () -> Duration = RateLimiter.monotonicNow) {
        alertLimiter = RateLimiter(Self.perAlert, now: now)
        deviceLimiter = RateLimiter(Self.perDevice, now: now)
    }

    /// Whether a message must always pass: see the type's comment.
    static func alwaysTaken(_ message: AlertBody, stored: StoredAlert?) -> Bool {
        guard let stored else { return true }
        if message.sequence == stored.latestSequence { return true }
        let closes = message.type == "resolved" || message.type == "cancelled"
        return stored.state == .open && closes && message.sequence > stored.latestSequence
    }

    /// Nil when the update may go on; else the seconds to wait (Retry-After).
    func take(device: String, alertID: String) -> Int? {
        if case .limited(let seconds) = alertLimiter.take(device + " " + alertID) { return seconds }
        if case .limited(let seconds) = deviceLimiter.take(device) { return seconds }
        return nil
    }
}

extension AlertRepository {
    /// The device's newest alerts in `state` (at most a page's most): enough for callers that
    /// ask whether there is one.
    func alerts(device: String, state: AlertState?) async throws -> [StoredAlert] {
        try await alerts(device: device, state: state, before: nil, limit: AlertLimits.pageMax)
    }
}
