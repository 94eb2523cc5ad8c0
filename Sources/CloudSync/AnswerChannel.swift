import FoundationEssentials
import HTTPClient
import PacerContract
import PacerCore
import Synchronization
import Threads

/// The cloud and the long-poll's wait, as the answers channel needs them; read again before
/// every poll, so a reload or a `pacerctl cloud link` takes effect at the next one.
public struct AnswerSettings: Sendable, Equatable {
    /// nil (or no token): no cloud, the channel waits.
    public var url: String?
    public var token: String?
    public var client: HTTPClient.Configuration
    /// `wait=` of the long-poll (the cloud's most is 5 s: an answer ends the wait at once, so
    /// this only sets how often an idle device asks again).
    public var waitSeconds: Int
    /// `[[privacy_zone]]`: "where are you?" sends no coordinates from inside one, outside an alert.
    public var privacyZones: [PrivacyZone]

    public init(url: String?, token: String?, client: HTTPClient.Configuration, waitSeconds: Int = 5, privacyZones: [PrivacyZone] = []) {
        self.url = url
        self.token = token
        self.client = client
        self.waitSeconds = waitSeconds
        self.privacyZones = privacyZones
    }
}

/// An answer as `pacerctl sos` shows it (and `cloud-answers.json` keeps it).
public struct HeardAnswer: Codable, Sendable, Equatable {
    /// As the device heard it (its text and name cleaned again).
    public var answer: AlertAnswerItem
    /// What the device did: what it said, or what it sent for "where are you?".
    public var outcome: String
}

/// `cloud-answers.json`: the last answer heard, so each is heard once across restarts, and the
/// newest few for `pacerctl sos`.
struct AnswerRecord: Codable, Equatable {
    var last_heard_id: Int64
    var recent: [HeardAnswer]
}

/// Monitors' answers to the device's alerts (issue 22), on two threads of their own: one
/// long-polls `GET /v1/device/answers` on its own HTTP connection (never behind an upload, a
/// sync or an alert), backing off while the cloud cannot be reached; the other decides
/// (`AnswerDesk`): it remembers each answer in the state directory, then has it said at SOS
/// priority, says it again every 2 minutes while its alert is open, and answers "where are
/// you?" with the position (`PUT /v1/position`).
public final class AnswerChannel: Sendable {
    enum Input: Sendable {
        case fetched([MonitorAnswer])
        case shutdown(done: @Sendable () -> Void)
    }

    private let decisions = BlockingQueue<Input>()
    /// Wakes the poller from a backoff (the network came back) or for its end.
    private let pollerWake = BlockingQueue<Bool>()
    private let stopping = Atomic<Bool>(false)
    private let heard = Mutex<[HeardAnswer]>([])
    static let recentKept = 10

    public init() {}

    /// The newest answers heard, newest first (`pacerctl sos`).
    public var recent: [HeardAnswer] { heard.withLock { $0.reversed() } }

    /// The network is back: a poll waiting out a backoff goes now.
    public func wake() { pollerWake.put(true) }

    /// Stops deciding; `done` once the decider is out. The poller ends after its current poll.
    public func shutdown(done: @escaping @Sendable () -> Void) {
        stopping.store(true, ordering: .releasing)
        pollerWake.put(false)
        decisions.put(.shutdown(done: done))
    }

    /// `settings`: the cloud now. `openAlerts`: the SOS lane's open alerts now. `position`: the
    /// newest fix as `PUT /v1/position` takes it, nil without one. `say`: says a sentence at
    /// SOS priority. All are called on the channel's threads.
    public func start(storePath: String, settings: @escaping @Sendable () -> AnswerSettings, openAlerts: @escaping @Sendable () -> Set<String>,
                      position: @escaping @Sendable () -> (LivePosition, Coordinate)?, say: @escaping @Sendable (String) -> Void,
                      log: @escaping @Sendable (SyncLogLevel, String) -> Void) throws(ThreadStartError) {
        let file = SyncFile(beside: storePath, name: "cloud-answers.json")
        var record = AnswerRecord(last_heard_id: 0, recent: [])
        do {
            if let bytes = try file.read() { record = try JSONDecoder().decode(AnswerRecord.self, from: Data(bytes)) }
        } catch {
            log(.error, "answers: which answers were heard (\(file.path)) cannot be read: \(error); answers still on the cloud may be said again")
        }
        heard.withLock { $0 = record.recent }
        let start = record
        try DetachedThread.start { [self] in
            var decider = AnswerDecider(record: start, file: file, settings: settings, position: position, say: say, log: log) { recent in
                self.heard.withLock { $0 = recent }
            }
            while true {
                let input = decisions.take(until: decider.desk.nextDueNs ?? .max)
                if case .shutdown(let done) = input {
                    done()
                    return
                }
                decider.turn(input, openAlerts: openAlerts(), nowNs: MonotonicTime.nanoseconds())
            }
        }
        try DetachedThread.start { [self] in
            var poller = AnswerPoller(cursor: start.last_heard_id, log: log)
            while !stopping.load(ordering: .acquiring) {
                let current = settings()
                let pause: UInt64
                if let answers = poller.poll(current) {
                    if !answers.isEmpty { decisions.put(.fetched(answers)) }
                    continue
                } else {
                    pause = poller.pauseNs(current)
                }
                // A backoff (or no cloud): woken early when the network comes back or pacerd stops.
                _ = pollerWake.take(until: MonotonicTime.nanoseconds() + pause)
            }
        }
    }
}

/// The decider's state: the desk, the file, what it says and sends.
struct AnswerDecider {
    private(set) var desk: AnswerDesk
    private var record: AnswerRecord
    let file: SyncFile
    let settings: @Sendable () -> AnswerSettings
    let position: @Sendable () -> (LivePosition, Coordinate)?
    let say: @Sendable (String) -> Void
    let log: @Sendable (SyncLogLevel, String) -> Void
    let published: @Sendable ([HeardAnswer]) -> Void
    private var session: HTTPSession?

    init(record: AnswerRecord, file: SyncFile, settings: @escaping @Sendable () -> AnswerSettings, position: @escaping @Sendable () -> (LivePosition, Coordinate)?,
         say: @escaping @Sendable (String) -> Void, log: @escaping @Sendable (SyncLogLevel, String) -> Void,
         published: @escaping @Sendable ([HeardAnswer]) -> Void) {
        desk = AnswerDesk(lastHeardID: record.last_heard_id)
        self.record = record
        self.file = file
        self.settings = settings
        self.position = position
        self.say = say
        self.log = log
        self.published = published
    }

    /// One input (nil: a repeat fell due); the open alerts are read first, so a repeat never
    /// follows a cancel.
    mutating func turn(_ input: AnswerChannel.Input?, openAlerts: Set<String>, nowNs: UInt64) {
        var actions = desk.handle(.openAlerts(openAlerts), nowNs: nowNs)
        if case .fetched(let answers) = input { actions += desk.handle(.fetched(answers), nowNs: nowNs) }
        actions += desk.handle(.tick, nowNs: nowNs)
        for action in actions { perform(action) }
    }

    private mutating func perform(_ action: AnswerDeskAction) {
        switch action {
        case .heard(let answer, let lastHeardID):
            record.last_heard_id = lastHeardID
            record.recent.append(Self.shown(answer))
            record.recent = Array(record.recent.suffix(AnswerChannel.recentKept))
            save()
        case .say(let text, let answerID):
            log(.notice, "answers: a monitor answered (answer \(answerID)); saying: \(text)")
            say(text)
        case .sendPosition(let answerID, let duringAlert):
            let outcome = sendPosition(duringAlert: duringAlert)
            log(.notice, "answers: asked where you are (answer \(answerID)): \(outcome)")
            if let index = record.recent.lastIndex(where: { $0.answer.id == answerID }) {
                record.recent[index].outcome = outcome
                save()
            }
        }
    }

    private mutating func sendPosition(duringAlert: Bool) -> String {
        let current = settings()
        let newest = position()
        switch PositionAnswer.decide(position: newest?.1, zones: current.privacyZones, duringAlert: duringAlert) {
        case .noPosition: return "no position to send (no GPS fix yet)"
        case .privatePlace: return "inside a privacy zone and no alert open: no position sent"
        case .send: break
        }
        guard let (live, _) = newest, let url = current.url, let token = current.token else { return "no cloud to send the position to" }
        if session?.configuration != current.client { session = HTTPSession(configuration: current.client) }
        let request = HTTPRequest(method: "PUT", url: url + "/v1/position",
                                  headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"), ("Accept", "application/json")],
                                  body: SyncEngine.json(live) ?? [], timeout: .seconds(15), connectTimeout: .seconds(10))
        do {
            let response = try session!.perform(request)
            return response.isSuccess ? "position of \(live.time) sent" : "the cloud refused the position: HTTP \(response.status)"
        } catch {
            return "the position could not be sent: \(error)"
        }
    }

    private func save() {
        published(record.recent)
        guard let bytes = SyncEngine.json(record) else { return }
        do { try file.write(bytes) } catch {
            log(.error, "answers: cannot note which answers were heard: \(error); after a restart they may be said again")
        }
    }

    static func shown(_ answer: MonitorAnswer) -> HeardAnswer {
        let (kind, text): (String, String?) = switch answer.kind {
        case .onMyWay: (AlertAnswerItem.onMyWay, nil)
        case .text(let text): (AlertAnswerItem.text, text)
        case .whereAreYou: (AlertAnswerItem.whereAreYou, nil)
        }
        let item = AlertAnswerItem(id: answer.id, alert_id: answer.alertID, from: answer.from, kind: kind, text: text, time: answer.time.iso8601)
        return HeardAnswer(answer: item, outcome: answer.spoken.map { "said: \($0)" } ?? "sending the position")
    }
}

/// The long-poll: `GET /v1/device/answers?after=CURSOR&wait=S` on a session of its own.
struct AnswerPoller {
    private(set) var cursor: Int64
    let log: @Sendable (SyncLogLevel, String) -> Void
    private var session: HTTPSession?
    private(set) var failures = 0
    private var lastProblem: String?

    init(cursor: Int64, log: @escaping @Sendable (SyncLogLevel, String) -> Void) {
        self.cursor = cursor
        self.log = log
    }

    /// The answers after the cursor (maybe none: the wait ended), or nil when the cloud could
    /// not be asked (no cloud, unreachable, refused).
    mutating func poll(_ settings: AnswerSettings) -> [MonitorAnswer]? {
        guard let url = settings.url, let token = settings.token else { return nil }
        if session?.configuration != settings.client { session = HTTPSession(configuration: settings.client) }
        let request = HTTPRequest(method: "GET", url: "\(url)/v1/device/answers?after=\(cursor)&wait=\(settings.waitSeconds)",
                                  headers: [("Authorization", "Bearer \(token)"), ("Accept", "application/json")],
                                  timeout: .seconds(Int64(settings.waitSeconds) + 15), connectTimeout: .seconds(10))
        let response: HTTPResponse
        do {
            response = try session!.perform(request)
        } catch {
            return problem("\(error)")
        }
        guard response.status == 200 else { return problem("HTTP \(response.status)") }
        let reply: AlertAnswersReply
        do {
            reply = try JSONDecoder().decode(AlertAnswersReply.self, from: Data(response.body))
        } catch {
            return problem("the cloud's answers are not understood (\(error))")
        }
        if failures > 0 { log(.notice, "answers: the cloud answers again after \(failures) failed attempt(s)") }
        failures = 0
        lastProblem = nil
        cursor = max(cursor, reply.last_id)
        return reply.answers.compactMap(Self.answer)
    }

    /// How long to wait before the next poll: 5 s without a cloud, else 1, 2, 4 … 60 s.
    func pauseNs(_ settings: AnswerSettings) -> UInt64 {
        guard settings.url != nil, settings.token != nil else { return 5_000_000_000 }
        return backoffSeconds * 1_000_000_000
    }

    private var backoffSeconds: UInt64 { UInt64(min(60, 1 << min(max(failures - 1, 0), 6))) }

    private mutating func problem(_ text: String) -> [MonitorAnswer]? {
        failures += 1
        if text != lastProblem || failures % 30 == 0 {
            log(.warning, "answers: the cloud cannot be asked for monitors' answers: \(text); asking again in \(backoffSeconds) s")
        }
        lastProblem = text
        return nil
    }

    /// The wire's answer as the desk takes it; nil for a kind this pacerd does not know (skipped,
    /// the cursor moves past it), with the text cleaned again, whatever the cloud sent.
    static func answer(_ item: AlertAnswerItem) -> MonitorAnswer? {
        let kind: MonitorAnswer.Kind
        switch item.kind {
        case AlertAnswerItem.onMyWay: kind = .onMyWay
        case AlertAnswerItem.whereAreYou: kind = .whereAreYou
        case AlertAnswerItem.text:
            let text = String(AnswerText.cleaned(item.text ?? "").prefix(AnswerText.maxCharacters))
            guard !text.isEmpty else { return nil }
            kind = .text(text)
        default: return nil
        }
        let from = String(AnswerText.cleaned(item.from).prefix(60))
        return MonitorAnswer(id: item.id, alertID: item.alert_id, from: from.isEmpty ? "Someone" : from, kind: kind,
                             time: Timestamp(iso8601: item.time) ?? Timestamp(milliseconds: 0))
    }
}
