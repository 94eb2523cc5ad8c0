/// What monitoring keeps (issue 22): the invitations that ask to watch a runner, the answers
/// monitors send to alerts, and the trail of the current run (`MonitoringRepository`).

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
