/// What monitoring keeps (issue 22): who may watch whom, the invitations that ask, the answers
/// monitors send to alerts, and the trail of the current run. Part of every `CloudStore`.
public protocol MonitorStore: Sendable {
    /// Stores the invitation (by its token's SHA-256) and queues `mail` (its link) in one transaction.
    func addMonitorInvite(_ invite: MonitorInvite, mail: OutboxMail) async throws
    /// The invitation the token's hash names, unless it has expired at `nowMs`.
    func monitorInvite(hash: String, nowMs: Int64) async throws -> MonitorInvite?
    /// The runner's invitations not yet accepted nor expired, newest first.
    func monitorInvites(runnerID: String, nowMs: Int64) async throws -> [MonitorInvite]
    /// Takes the invitation and records the consent in one transaction; the runner's account
    /// id, or nil when it was taken already or has expired (an invitation works once).
    func acceptMonitorInvite(hash: String, monitorID: String, nowMs: Int64) async throws -> String?
    /// Ends the consent; false when there was none.
    func endConsent(runnerID: String, monitorID: String) async throws -> Bool
    /// The accounts that watch the runner.
    func monitors(runnerID: String) async throws -> [Account]
    /// The runners the monitor watches.
    func watchedRunners(monitorID: String) async throws -> [Account]
    func isMonitor(_ monitorID: String, of runnerID: String) async throws -> Bool
    /// One device by its id (what hub events name), revoked or not.
    func device(id: String) async throws -> Device?

    /// Stores the answer; it again with its id, which orders a device's answers.
    func addAlertAnswer(_ answer: AlertAnswer) async throws -> AlertAnswer
    /// The answers to one alert of the device, oldest first.
    func alertAnswers(device: String, alertID: String) async throws -> [AlertAnswer]
    /// The newest `limit` answers to one alert of the device, oldest first (what pages show).
    func alertAnswers(device: String, alertID: String, newest limit: Int) async throws -> [AlertAnswer]
    /// The device's answers with an id above `after`, oldest first, at most `limit`.
    func alertAnswers(device: String, after: Int64, limit: Int) async throws -> [AlertAnswer]

    /// Adds a point to the run's trail and forgets the device's points older than `forgetBeforeMs`.
    func addTrailPoint(device: String, runID: String, point: TrailPoint, forgetBeforeMs: Int64) async throws
    /// Marks where the run's trail breaks (the runner entered a private place): the points
    /// before and after are never joined by a line.
    func addTrailBreak(device: String, runID: String, timeMs: Int64) async throws
    /// The run's trail, oldest first, at most the newest `limit` points, breaks included.
    func trail(device: String, runID: String, limit: Int) async throws -> [TrailPoint]
    /// Forgets every trail point of the device (its run ended).
    func clearTrail(device: String) async throws
    /// Forgets the device's last live position (it is in a private place).
    func forgetPosition(device: String) async throws
}

/// How a trail's breaks are kept in `position_trail` without another column: as rows of their
/// own run id, the run's id with this suffix (a run id is a UUID, so none ends with it).
enum TrailBreak {
    static let suffix = "/break"
}

/// An invitation to watch a runner, e-mailed to `email` with a single-use link.
public struct MonitorInvite: Sendable, Equatable {
    public var hash: String
    public var runnerID: String
    public var email: String
    public var createdMs: Int64
    public var expiresMs: Int64

    public init(hash: String, runnerID: String, email: String, createdMs: Int64, expiresMs: Int64) {
        self.hash = hash
        self.runnerID = runnerID
        self.email = email
        self.createdMs = createdMs
        self.expiresMs = expiresMs
    }
}

/// A monitor's answer to an open alert: "on my way", or a short text the device may speak.
public struct AlertAnswer: Sendable, Equatable {
    public static let onMyWay = "on_my_way"
    public static let text = "text"
    /// "Where are you?": the device sends its position; under the open alert's id, or "" outside one.
    public static let whereAreYou = "where_are_you"

    public var id: Int64
    public var device: String
    public var alertID: String
    public var monitorID: String
    /// The monitor's display name when they answered (what the device says).
    public var monitorName: String
    /// `onMyWay`, `text` or `whereAreYou`.
    public var kind: String
    public var text: String?
    public var createdMs: Int64

    public init(id: Int64 = 0, device: String, alertID: String, monitorID: String, monitorName: String, kind: String, text: String?,
                createdMs: Int64) {
        self.id = id
        self.device = device
        self.alertID = alertID
        self.monitorID = monitorID
        self.monitorName = monitorName
        self.kind = kind
        self.text = text
        self.createdMs = createdMs
    }
}

/// One point of a run's live trail, or a break in it (`isBreak`, where the runner entered a
/// private place: its lat and lon are 0 and mean nothing).
public struct TrailPoint: Sendable, Equatable {
    public var timeMs: Int64
    public var lat: Double
    public var lon: Double
    public var isBreak: Bool

    public init(timeMs: Int64, lat: Double, lon: Double, isBreak: Bool = false) {
        self.timeMs = timeMs
        self.lat = lat
        self.lon = lon
        self.isBreak = isBreak
    }

    /// The trail as the lines to draw: split at every break, empty pieces dropped.
    public static func segments(_ points: [TrailPoint]) -> [[[Double]]] {
        var segments: [[[Double]]] = [[]]
        for point in points {
            if point.isBreak {
                if segments[segments.count - 1].isEmpty == false { segments.append([]) }
            } else {
                segments[segments.count - 1].append([point.lat, point.lon])
            }
        }
        return segments.filter { !$0.isEmpty }
    }
}
