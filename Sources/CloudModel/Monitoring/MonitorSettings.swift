/// The limits of monitoring: how long dashboard streams last, how often they tick, how much
/// each may buffer, and how many one account may hold open.
public struct MonitorSettings: Sendable, Equatable {
    /// A stream ends after this and the browser reconnects (EventSource does by itself): a
    /// session that ended, or a consent that ended, stops showing within this time at worst.
    public var streamLifetime: Duration
    /// A comment line this often keeps proxies and the browser from timing the stream out.
    public var heartbeat: Duration
    /// Events one stream may hold unsent before the oldest go.
    public var streamBuffer: Int
    /// Streams one account may hold open on one instance (a few tabs and phones).
    public var streamsPerAccount: Int
    /// How long an invitation link works.
    public var inviteLifetime: Duration
    /// Invitations a runner may have waiting at once (each sends an e-mail).
    public var pendingInvitesPerRunner: Int
    /// The longest a device's long-poll for answers waits (an answer ends the wait at once, so
    /// this only sets how often an idle device asks again).
    public var answerWaitMax: Duration
    /// How long the trail of a run keeps its points.
    public var trailKept: Duration
    /// Answers one monitor may send to one alert (the device speaks each).
    public var answersPerMonitorPerAlert: Int
    /// "Where are you?" one monitor may ask of one device in a minute (the device answers each).
    public var whereAreYouPerMinute: Int

    public static let defaults = MonitorSettings(streamLifetime: .seconds(300), heartbeat: .seconds(15))

    public init(streamLifetime: Duration, heartbeat: Duration, streamBuffer: Int = 256, streamsPerAccount: Int = 8,
                inviteLifetime: Duration = .seconds(7 * 24 * 3600), pendingInvitesPerRunner: Int = 20, answerWaitMax: Duration = .seconds(5),
                trailKept: Duration = .seconds(12 * 3600), answersPerMonitorPerAlert: Int = 10,
                whereAreYouPerMinute: Int = 3) {
        self.answersPerMonitorPerAlert = answersPerMonitorPerAlert
        self.whereAreYouPerMinute = whereAreYouPerMinute
        self.streamLifetime = streamLifetime
        self.heartbeat = heartbeat
        self.streamBuffer = streamBuffer
        self.streamsPerAccount = streamsPerAccount
        self.inviteLifetime = inviteLifetime
        self.pendingInvitesPerRunner = pendingInvitesPerRunner
        self.answerWaitMax = answerWaitMax
        self.trailKept = trailKept
    }
}
