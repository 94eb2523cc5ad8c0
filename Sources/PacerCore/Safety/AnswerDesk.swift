/// A monitor's answer to the device's alerts as the device received it (`GET /v1/device/answers`).
public struct MonitorAnswer: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// "I am on my way".
        case onMyWay
        /// A short text, cleaned for speech.
        case text(String)
        /// "Where are you?": the device sends its position at once (nothing is said).
        case whereAreYou
    }

    /// Orders the device's answers; the desk hears each id once.
    public var id: Int64
    /// The alert answered ("" for "where are you?" asked outside an alert).
    public var alertID: String
    /// The monitor's display name ("Anna").
    public var from: String
    public var kind: Kind
    /// When the monitor sent it.
    public var time: Timestamp

    public init(id: Int64, alertID: String, from: String, kind: Kind, time: Timestamp) {
        self.id = id
        self.alertID = alertID
        self.from = from
        self.kind = kind
        self.time = time
    }

    /// What the device says for it; nil for "where are you?".
    public var spoken: String? {
        switch kind {
        // The cloud knows a name, not a gender: "on the way", as the alert's page says it.
        case .onMyWay: "\(from) is on the way"
        case .text(let text): "\(from) says: \(text)"
        case .whereAreYou: nil
        }
    }
}

/// What the answer desk reacts to. Times are CLOCK_MONOTONIC nanoseconds passed in.
public enum AnswerDeskInput: Sendable, Equatable {
    /// Answers fetched from the cloud, oldest first (ids at or below the last heard are ignored).
    case fetched([MonitorAnswer])
    /// The alerts the SOS lane has open now (their UUIDs, the cloud's `alert_id`).
    case openAlerts(Set<String>)
    /// Time passes: repeats fall due.
    case tick
}

public enum AnswerDeskAction: Sendable, Equatable {
    /// Remember the answer (and that `lastHeardID` is heard) before anything is said or sent,
    /// so a restart never hears it again.
    case heard(MonitorAnswer, lastHeardID: Int64)
    /// Say `text` at SOS priority (`CueKind.sosAnswer`).
    case say(String, answerID: Int64)
    /// Send the current position now (`PUT /v1/position`); `duringAlert`: even from inside a
    /// privacy zone (`PositionAnswer.decide`).
    case sendPosition(answerID: Int64, duringAlert: Bool)
}

/// What to do with "where are you?" given the newest position.
public enum PositionAnswer: Sendable, Equatable {
    case send
    /// Outside an alert, inside a privacy zone: no coordinates leave the device.
    case privatePlace
    /// No fix yet: there is nothing to send.
    case noPosition

    public static func decide(position: Coordinate?, zones: [PrivacyZone], duringAlert: Bool) -> PositionAnswer {
        guard let position else { return .noPosition }
        // An alert must say where the person is: zones never hide a position then.
        if !duringAlert, zones.hides(position) { return .privatePlace }
        return .send
    }
}

/// The device's side of monitors' answers, pure: answers, open alerts and time in, what to
/// remember, say and send out. Each answer is heard once (`lastHeardID`, kept by the caller
/// across restarts); an answer to an alert that is open is said again every `repeatNs` while
/// that alert stays open (a newer answer of the same monitor to it takes its place); a closed
/// or cancelled alert's answers are not repeated.
public struct AnswerDesk: Sendable {
    public static let repeatNs: UInt64 = 120_000_000_000

    private struct Repeat: Sendable {
        var answerID: Int64
        var text: String
        var dueNs: UInt64
    }

    private struct RepeatKey: Hashable, Sendable {
        var alertID: String
        var from: String
    }

    public private(set) var lastHeardID: Int64
    public private(set) var openAlerts: Set<String> = []
    private var repeats: [RepeatKey: Repeat] = [:]

    public init(lastHeardID: Int64) {
        self.lastHeardID = lastHeardID
    }

    /// When the next repeat falls due, if any.
    public var nextDueNs: UInt64? { repeats.values.map(\.dueNs).min() }

    public mutating func handle(_ input: AnswerDeskInput, nowNs: UInt64) -> [AnswerDeskAction] {
        switch input {
        case .fetched(let answers):
            var actions: [AnswerDeskAction] = []
            for answer in answers.sorted(by: { $0.id < $1.id }) where answer.id > lastHeardID {
                lastHeardID = answer.id
                actions.append(.heard(answer, lastHeardID: answer.id))
                guard let text = answer.spoken else {
                    actions.append(.sendPosition(answerID: answer.id, duringAlert: !openAlerts.isEmpty))
                    continue
                }
                actions.append(.say(text, answerID: answer.id))
                if openAlerts.contains(answer.alertID) {
                    repeats[RepeatKey(alertID: answer.alertID, from: answer.from)] = Repeat(answerID: answer.id, text: text, dueNs: nowNs + Self.repeatNs)
                }
            }
            return actions
        case .openAlerts(let open):
            openAlerts = open
            repeats = repeats.filter { open.contains($0.key.alertID) }
            return []
        case .tick:
            var actions: [AnswerDeskAction] = []
            for key in repeats.keys.sorted(by: { (repeats[$0]?.answerID ?? 0) < (repeats[$1]?.answerID ?? 0) }) {
                guard var due = repeats[key], due.dueNs <= nowNs else { continue }
                actions.append(.say(due.text, answerID: due.answerID))
                due.dueNs = nowNs + Self.repeatNs
                repeats[key] = due
            }
            return actions
        }
    }
}
