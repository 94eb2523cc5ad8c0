@testable import CloudSync
import Foundation
import HTTPClient
import PacerContract
import PacerTestSupport
import Synchronization
import Testing

/// The cloud as the sync thread sees it, in memory: notices until acknowledged, an ETag over
/// them, the heartbeats received. `online` false: every request fails to connect.
final class ScriptedCloud: @unchecked Sendable {
    var notices: [Notice] = []
    var acknowledged: [String] = []
    var states: [DeviceState] = []
    var requests: [(method: String, path: String, ifNoneMatch: String?)] = []
    var online = true
    /// The `plan` section; its version is part of the ETag.
    var plan: PlanSection?
    /// The profile's units (part of the ETag too).
    var units: String?

    func add(_ text: String) -> Notice {
        let notice = Notice(id: UUID().uuidString.lowercased(), text: text, created_at: "2026-05-10T07:30:00.000Z")
        notices.append(notice)
        return notice
    }

    func perform(_ request: HTTPRequest) throws(HTTPClientError) -> HTTPResponse {
        let path = String(request.url.dropFirst("http://cloud.test".count))
        let ifNoneMatch = request.headers.first { $0.0 == "If-None-Match" }?.1
        requests.append((request.method, path, ifNoneMatch))
        guard online else { throw .couldNotConnect(host: "cloud.test", port: 80, detail: "connection refused") }
        #expect(request.headers.contains { $0 == ("Authorization", "Bearer device-token") })
        switch (request.method, path) {
        case ("GET", "/v1/device/sync"):
            let pending = notices.filter { !acknowledged.contains($0.id) }
            let etag = "\"" + pending.map(\.id).joined(separator: ",") + (plan.map { ";plan-\($0.version)" } ?? "") + (units.map { ";units-\($0)" } ?? "") + "\""
            if ifNoneMatch == etag { return HTTPResponse(status: 304, headers: [("ETag", etag)], body: []) }
            let sync = DeviceSync(sections: .init(
                notices: NoticesSection(version: String(pending.count), items: pending),
                profile: ProfileSection(version: "p1", display_name: "Ann", timezone: "Europe/Rome", linked: true, units: units), plan: plan))
            return HTTPResponse(status: 200, headers: [("ETag", etag)], body: Array(try! JSONEncoder().encode(sync)))
        case ("POST", "/v1/device/sync/ack"):
            let ack = try! JSONDecoder().decode(NoticeAck.self, from: Data(request.body))
            acknowledged += ack.notice_ids.filter { !acknowledged.contains($0) }
            return HTTPResponse(status: 200, headers: [], body: Array(#"{"acknowledged":1}"#.utf8))
        case ("PUT", "/v1/device/state"):
            states.append(try! JSONDecoder().decode(DeviceState.self, from: Data(request.body)))
            return HTTPResponse(status: 200, headers: [], body: Array(#"{"stored":true}"#.utf8))
        default:
            return HTTPResponse(status: 404, headers: [], body: [])
        }
    }
}

/// What the speaker was offered, and what it answers.
final class ScriptedSpeaker: @unchecked Sendable {
    var offered: [String] = []
    var answer = NoticeDelivery.offered
}

/// The sync thread's loop, one step at a time with times passed in: no network, no thread, no waiting.
@Suite(.timeLimit(.minutes(10))) struct SyncLoopTests {
    static let settings = SyncSettings(url: "http://cloud.test", token: "device-token", client: HTTPClient.Configuration(),
                                       syncEverySeconds: 60, stateEverySeconds: 30, maxHeartRateBpm: 185)
    static let second: UInt64 = 1_000_000_000

    /// A state directory (removed when the test ends), an empty cloud and a willing speaker.
    static func fixture() throws -> (TemporaryDirectory, ScriptedCloud, ScriptedSpeaker) {
        (try TemporaryDirectory(prefix: "pacer-sync"), ScriptedCloud(), ScriptedSpeaker())
    }

    /// A fresh loop on `directory`'s state files: what a pacerd start makes.
    static func loop(_ directory: TemporaryDirectory, _ cloud: ScriptedCloud, _ speaker: ScriptedSpeaker,
                     state: @escaping @Sendable () -> DeviceState? = { nil }) -> SyncLoop {
        let engine = SyncEngine(settings: settings, storePath: directory.file("pacer.db"),
                                transport: { request throws(HTTPClientError) in try cloud.perform(request) }, log: { _, _ in })
        return SyncLoop(engine: engine, state: state, say: { notice in
            speaker.offered.append(notice.text)
            return speaker.answer
        }, log: { _, _ in })
    }

    @Test("a notice is said once and acknowledged; after a restart it is not said again, online or not")
    func saidOnceAcrossRestarts() throws {
        let (directory, cloud, speaker) = try Self.fixture()
        defer { directory.remove() }
        let notice = cloud.add("Rain at five")
        var loop = Self.loop(directory, cloud, speaker)
        loop.offerNextNotice()
        #expect(speaker.offered.isEmpty)
        #expect(loop.due(at: 0) == .fetch)
        loop.perform(.fetch, at: 0)
        #expect(speaker.offered == ["Rain at five"] && loop.saying?.id == notice.id)
        // Said to its end: acknowledged at once.
        loop.handle(.noticeOutcome(text: "Rain at five", said: true), at: Self.second)
        #expect(cloud.acknowledged == [notice.id])

        for online in [false, true] {
            cloud.online = online
            var restarted = Self.loop(directory, cloud, speaker)
            restarted.offerNextNotice()
            restarted.perform(.fetch, at: 0)
            #expect(speaker.offered == ["Rain at five"], "online: \(online)")
        }
    }

    @Test("a notice fetched but not said before a restart is said after it, offline, and acknowledged once the cloud answers")
    func unsaidNoticeSurvivesARestart() throws {
        let (directory, cloud, speaker) = try Self.fixture()
        defer { directory.remove() }
        let notice = cloud.add("Well done")
        var first = Self.loop(directory, cloud, speaker)
        first.perform(.fetch, at: 0)
        #expect(speaker.offered == ["Well done"])
        // pacerd stops before the speaker is done; it starts again with the network down.
        cloud.online = false
        var second = Self.loop(directory, cloud, speaker)
        second.offerNextNotice()
        #expect(speaker.offered == ["Well done", "Well done"] && second.saying?.id == notice.id)
        second.handle(.noticeOutcome(text: "Well done", said: true), at: Self.second)
        #expect(cloud.acknowledged.isEmpty)
        // Said, not yet acknowledged: another restart neither says it nor forgets to acknowledge it.
        cloud.online = true
        var third = Self.loop(directory, cloud, speaker)
        third.offerNextNotice()
        third.perform(.fetch, at: 0)
        #expect(speaker.offered.count == 2)
        #expect(cloud.acknowledged == [notice.id])
    }

    @Test("nothing changed: the ETag is sent back and the 304 changes nothing; the next fetch is a minute on")
    func notModified() throws {
        let (directory, cloud, speaker) = try Self.fixture()
        defer { directory.remove() }
        var loop = Self.loop(directory, cloud, speaker)
        let first = loop.engine.fetch(nowMs: 1_000)
        #expect(first.reached && first.changed == ["notices", "profile"] && first.newNotices == 0)
        let second = loop.engine.fetch(nowMs: 2_000)
        #expect(second.reached && second.changed.isEmpty && second.fetchedAt == WireTime.text(milliseconds: 1_000))
        #expect(cloud.requests.map(\.ifNoneMatch) == [nil, "\"\""])
        _ = cloud.add("New")
        let third = loop.engine.fetch(nowMs: 3_000)
        #expect(third.changed == ["notices"] && third.newNotices == 1)

        loop.perform(.fetch, at: 5 * Self.second)
        #expect(loop.due(at: 64 * Self.second) != .fetch)
        #expect(loop.due(at: 65 * Self.second) == .fetch)
    }

    @Test("muted or cut off: the notice waits for the next fetch instead of being offered again at once")
    func declinedNoticeWaits() throws {
        let (directory, cloud, speaker) = try Self.fixture()
        defer { directory.remove() }
        _ = cloud.add("Hello")
        speaker.answer = .notNow
        var loop = Self.loop(directory, cloud, speaker)
        loop.perform(.fetch, at: 0)
        loop.offerNextNotice()
        #expect(speaker.offered == ["Hello"] && loop.saying == nil)
        speaker.answer = .offered
        loop.perform(.fetch, at: 60 * Self.second)
        #expect(speaker.offered == ["Hello", "Hello"] && loop.saying != nil)
        loop.handle(.noticeOutcome(text: "Hello", said: false), at: 61 * Self.second)
        loop.offerNextNotice()
        #expect(speaker.offered.count == 2 && cloud.acknowledged.isEmpty)
        // An outcome for another text (a stale event) changes nothing.
        loop.perform(.fetch, at: 120 * Self.second)
        loop.handle(.noticeOutcome(text: "Something else", said: true), at: 121 * Self.second)
        #expect(cloud.acknowledged.isEmpty && loop.saying != nil)
    }

    @Test("no voice: a notice is logged, counts as said, and is acknowledged")
    func noVoice() throws {
        let (directory, cloud, speaker) = try Self.fixture()
        defer { directory.remove() }
        let notices = [cloud.add("One"), cloud.add("Two")]
        speaker.answer = .noVoice
        var loop = Self.loop(directory, cloud, speaker)
        loop.perform(.fetch, at: 0)
        #expect(speaker.offered == ["One", "Two"] && cloud.acknowledged == notices.map(\.id))
    }

    @Test("heartbeat: on its schedule with the profile's maximum, and at once when the run's state or SOS changes")
    func heartbeat() throws {
        let (directory, cloud, speaker) = try Self.fixture()
        defer { directory.remove() }
        let current = Mutex(DeviceState(time: "2026-05-10T07:30:00.000Z", state: "idle", battery_percent: 90, strap_battery_percent: nil,
                                        sos_monitoring: true, heart_rate: nil, max_hr_bpm: nil, hr_daily: nil))
        var loop = Self.loop(directory, cloud, speaker, state: { current.withLock { $0 } })
        loop.perform(.fetch, at: 0)
        #expect(loop.due(at: 0) == .heartbeat)
        loop.perform(.heartbeat, at: 0)
        #expect(cloud.states.map(\.state) == ["idle"] && cloud.states[0].max_hr_bpm == 185 && cloud.states[0].battery_percent == 90)
        #expect(loop.due(at: 29 * Self.second) == nil && loop.due(at: 30 * Self.second) == .heartbeat)
        // The same state: no extra heartbeat; a new one: due at once.
        current.withLock { $0.battery_percent = 89 }
        loop.handle(.stateChanged, at: Self.second)
        #expect(loop.due(at: Self.second) == nil)
        current.withLock { $0.state = "recording" }
        loop.handle(.stateChanged, at: 2 * Self.second)
        #expect(loop.due(at: 2 * Self.second) == .heartbeat)
        loop.perform(.heartbeat, at: 2 * Self.second)
        current.withLock { $0.sos_monitoring = false }
        loop.handle(.stateChanged, at: 3 * Self.second)
        #expect(loop.due(at: 3 * Self.second) == .heartbeat)
        loop.perform(.heartbeat, at: 3 * Self.second)
        #expect(cloud.states.map(\.state) == ["idle", "recording", "recording"] && cloud.states.last?.sos_monitoring == false)
        // Into a privacy zone and out: each goes at once, so the dashboard stops showing a position.
        current.withLock { $0.in_private_place = true }
        loop.handle(.stateChanged, at: 4 * Self.second)
        #expect(loop.due(at: 4 * Self.second) == .heartbeat)
        loop.perform(.heartbeat, at: 4 * Self.second)
        loop.handle(.stateChanged, at: 5 * Self.second)
        #expect(loop.due(at: 5 * Self.second) == nil)
        current.withLock { $0.in_private_place = false }
        loop.handle(.stateChanged, at: 6 * Self.second)
        #expect(loop.due(at: 6 * Self.second) == .heartbeat)
        loop.perform(.heartbeat, at: 6 * Self.second)
        #expect(cloud.states.suffix(2).map(\.in_private_place) == [true, false])
    }

    @Test("hr_daily: the days the cloud lacks go with the heartbeat until one is taken, on the profile's time zone; kept across a restart")
    func heartRateDays() throws {
        let (directory, cloud, _) = try Self.fixture()
        defer { directory.remove() }
        let days = HeartRateDays(storePath: directory.file("pacer.db"), log: { _, _ in })
        let state = DeviceState(time: "2026-05-10T23:40:00.000Z", state: "idle", battery_percent: nil, strap_battery_percent: nil,
                                sos_monitoring: false, heart_rate: nil, max_hr_bpm: nil, hr_daily: nil)
        let engine = SyncEngine(settings: Self.settings, storePath: directory.file("pacer.db"),
                                transport: { request throws(HTTPClientError) in try cloud.perform(request) }, log: { _, _ in })
        var loop = SyncLoop(engine: engine, state: { state }, heartRate: days, say: { _ in .noVoice }, log: { _, _ in })
        // Before any sync: UTC. 2026-05-10T22:00Z.
        days.add(bpm: 58, timeMs: 1_778_450_400_000)
        loop.perform(.fetch, at: 0)
        #expect(days.timezone == "Europe/Rome")
        // 23:30 UTC is 01:30 on the 11th in Rome.
        days.add(bpm: 55, timeMs: 1_778_455_800_000)
        loop.perform(.heartbeat, at: 0)
        let sent = try #require(cloud.states.last?.hr_daily)
        #expect(sent == [.init(date: "2026-05-10", count: 1, min_bpm: 58, resting_bpm: nil), .init(date: "2026-05-11", count: 1, min_bpm: 55, resting_bpm: nil)])
        #expect(cloud.states.last?.max_hr_bpm == 185)
        // Taken: not sent again until a day changes.
        loop.perform(.heartbeat, at: 30 * Self.second)
        #expect(cloud.states.count == 2 && cloud.states[1].hr_daily == nil)
        days.add(bpm: 52, timeMs: 1_778_455_900_000)
        // The cloud does not answer: the day goes with the next heartbeat that gets through.
        cloud.online = false
        loop.perform(.heartbeat, at: 60 * Self.second)
        cloud.online = true
        loop.perform(.heartbeat, at: 90 * Self.second)
        #expect(cloud.states.last?.hr_daily == [.init(date: "2026-05-11", count: 2, min_bpm: 52, resting_bpm: nil)])
        // Stopping writes the days; the next start reads them, and what the cloud took.
        days.add(bpm: 51, timeMs: 1_778_456_000_000)
        loop.finish()
        let restarted = HeartRateDays(storePath: directory.file("pacer.db"), log: { _, _ in })
        #expect(restarted.summaries == days.summaries && restarted.summaries.map(\.count) == [1, 3])
        #expect(restarted.unsent() == [.init(date: "2026-05-11", count: 3, min_bpm: 51, resting_bpm: nil)])
    }

    @Test("wakes fetch at once, but at most every 10 s; pacerctl sync always fetches and gets the report")
    func wakesAndSyncNow() throws {
        let (directory, cloud, speaker) = try Self.fixture()
        defer { directory.remove() }
        var loop = Self.loop(directory, cloud, speaker)
        loop.perform(.fetch, at: 0)
        loop.perform(.heartbeat, at: 0)
        loop.handle(.wake(reason: "an upload got through"), at: 5 * Self.second)
        #expect(loop.due(at: 5 * Self.second) == nil)
        loop.handle(.wake(reason: "an upload got through"), at: 11 * Self.second)
        #expect(loop.due(at: 11 * Self.second) == .fetch)
        loop.perform(.fetch, at: 11 * Self.second)
        let reports = Mutex<[SyncReport]>([])
        _ = cloud.add("Now")
        loop.handle(.syncNow(reply: { report in reports.withLock { $0.append(report) } }), at: 12 * Self.second)
        #expect(loop.due(at: 12 * Self.second) == .fetch)
        loop.perform(.fetch, at: 12 * Self.second)
        let report = try #require(reports.withLock { $0 }.first)
        #expect(report.reached && report.changed == ["notices"] && report.newNotices == 1 && report.unsaid == 1)
    }
}

@Suite(.timeLimit(.minutes(10))) struct NoticeTextTests {
    @Test("cleaned for speech: one line, single spaces, no markup characters; already clean text is unchanged")
    func clean() {
        #expect(NoticeText.clean("  Rain\r\nat\tfive:\u{0}  <take> a [jacket]_#*  ") == "Rain at five: take a jacket")
        #expect(NoticeText.clean("\u{200B}Zero\u{2028}width\u{7F}") == "Zero width")
        #expect(NoticeText.clean("Café, 5 km à 6'00\" — ok?") == "Café, 5 km à 6'00\" — ok?")
        #expect(NoticeText.clean(" \n\t ").isEmpty)
        for text in ["Rain at five: take a jacket", "Zero width"] { #expect(NoticeText.clean(text) == text) }
    }
}
