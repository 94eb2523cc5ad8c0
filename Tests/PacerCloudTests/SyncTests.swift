import CloudModel
import CloudStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// The sync channel: notices and the device's state in both stores; `GET /v1/device/sync` with
/// its versions, ETag and 304; acknowledgements; the heartbeat's validation; `notice send`.
@Suite("pacer-cloud: the device's sync channel", .timeLimit(.minutes(10)))
struct SyncTests {
    static let uuidA = "0f0f0f0f-0000-4000-8000-00000000000a"

    @Test("notices: pending oldest first, acknowledged all or none, idempotent; removed with the device", arguments: Backend.allCases)
    func noticeStore(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            _ = try await cloud.addDevice("pacer-1")
            _ = try await cloud.addDevice("pacer-2")
            let devices = try await cloud.store.devices.devices()
            let one = try #require(devices.first { $0.name == "pacer-1" }).id, two = try #require(devices.first { $0.name == "pacer-2" }).id
            let first = StoredNotice(id: UUID().uuidString.lowercased(), device: one, text: "first", createdMs: 1_000)
            let second = StoredNotice(id: UUID().uuidString.lowercased(), device: one, text: "second", createdMs: 2_000)
            let others = StoredNotice(id: UUID().uuidString.lowercased(), device: two, text: "not yours", createdMs: 500)
            for notice in [second, others, first] { try await cloud.store.sync.addNotice(notice) }
            #expect(try await cloud.store.sync.pendingNotices(device: one, limit: 10) == [first, second])
            #expect(try await cloud.store.sync.pendingNotices(device: one, limit: 1) == [first])

            // Another device's notice and an unknown id: refused by name, and nothing marked.
            let unknown = UUID().uuidString.lowercased()
            #expect(try await cloud.store.sync.acknowledgeNotices(device: one, ids: [first.id, others.id, unknown], nowMs: 5_000).sorted()
                == [others.id, unknown].sorted())
            #expect(try await cloud.store.sync.pendingNotices(device: one, limit: 10).count == 2)
            #expect(try await cloud.store.sync.acknowledgeNotices(device: one, ids: [first.id], nowMs: 5_000) == [])
            #expect(try await cloud.store.sync.acknowledgeNotices(device: one, ids: [first.id, second.id], nowMs: 9_000) == [])
            #expect(try await cloud.store.sync.pendingNotices(device: one, limit: 10) == [])
            // Delivered at its first acknowledgement, not moved by a repeat.
            #expect(try await cloud.store.sync.notices(device: one).map(\.deliveredMs) == [5_000, 9_000])
            #expect(try await cloud.store.sync.pendingNotices(device: two, limit: 10) == [others])

            try await cloud.store.health.putDeviceState(device: one, receivedMs: 1, json: #"{"state":"idle"}"#)
            try await cloud.store.health.putDeviceState(device: one, receivedMs: 2, json: #"{"state":"recording"}"#)
            #expect(try await cloud.store.sync.deviceState(device: one) == StoredDeviceState(receivedMs: 2, json: #"{"state":"recording"}"#))
            #expect(try await cloud.store.sync.deviceState(device: two) == nil)
            let removed = try #require(try await cloud.store.removeDevice(name: "pacer-1"))
            #expect(removed.notices == 2 && removed.deviceStates == 1)
            let counts = try await cloud.store.counts()
            #expect(counts.notices == 1 && counts.deviceStates == 0)
        }
    }

    @Test("sync: sections with versions; the ETag gives 304 until something changes; the profile follows the account",
          arguments: Backend.allCases)
    func syncAndNotModified(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-1")
            let first = try await cloud.request(.get, "/v1/device/sync", token: token)
            #expect(first.status == .ok)
            let etag = try #require(first.headers[.eTag])
            var sync = try JSONDecoder().decode(DeviceSync.self, from: Data(buffer: first.body))
            #expect(sync.sections.notices?.items == [])
            #expect(sync.sections.profile?.display_name == "Runner" && sync.sections.profile?.timezone == "UTC"
                && sync.sections.profile?.linked == false)
            let profileVersion = try #require(sync.sections.profile?.version)
            #expect(profileVersion.count == 16)

            let again = try await cloud.request(.get, "/v1/device/sync", token: token, headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified && again.body.readableBytes == 0 && again.headers[.eTag] == etag)
            #expect(try await cloud.request(.get, "/v1/device/sync", token: token, headers: [.ifNoneMatch: "\"other\", W/\(etag)"]).status
                == .notModified)
            #expect(try await cloud.request(.get, "/v1/device/sync", token: token, headers: [.ifNoneMatch: "\"other\""]).status == .ok)

            let queued = try await Notices.send(store: cloud.store, to: "pacer-1", text: "Hello\n  <b>Ann</b>,\tsee you at 7", nowMs: Track.start)
            #expect(queued.map(\.text) == ["Hello bAnn/b, see you at 7"])
            let changed = try await cloud.request(.get, "/v1/device/sync", token: token, headers: [.ifNoneMatch: etag])
            #expect(changed.status == .ok && changed.headers[.eTag] != etag)
            sync = try JSONDecoder().decode(DeviceSync.self, from: Data(buffer: changed.body))
            #expect(sync.sections.notices?.items == [Notice(id: queued[0].id, text: queued[0].text, created_at: "2026-05-10T07:30:00.000Z")])
            #expect(sync.sections.profile?.version == profileVersion)

            let owner = try await Accounts.create(store: cloud.store, email: "ann@example.org", password: AccountTests.password,
                                                  displayName: "Ann", timezone: "Europe/Rome", confirmed: true, cost: AccountTests.cost)
            #expect(try await cloud.store.devices.assignDevice(name: "pacer-1", accountID: owner.id))
            let owned = try await cloud.request(.get, "/v1/device/sync", token: token)
            sync = try JSONDecoder().decode(DeviceSync.self, from: Data(buffer: owned.body))
            #expect(sync.sections.profile?.display_name == "Ann" && sync.sections.profile?.timezone == "Europe/Rome"
                && sync.sections.profile?.linked == true)
            #expect(sync.sections.profile?.version != profileVersion)
        }
    }

    @Test("ack: said notices leave the section; repeats are fine; a bad or unknown id is a 4xx naming it", arguments: Backend.allCases)
    func acknowledge(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-1")
            let other = try await cloud.addDevice("pacer-2")
            let mine = try await Notices.send(store: cloud.store, to: "pacer-1", text: "one")
            let theirs = try await Notices.send(store: cloud.store, to: "pacer-2", text: "two")
            let foreign = try await cloud.json(.post, "/v1/device/sync/ack", token: token, ["notice_ids": [mine[0].id, theirs[0].id]])
            #expect(foreign.status == .notFound && foreign.errorMessage.contains(theirs[0].id) && !foreign.errorMessage.contains(mine[0].id),
                    "\(foreign.text)")
            #expect(try await cloud.store.sync.pendingNotices(device: mine[0].device, limit: 10).count == 1)
            for (body, field) in [(["notice_ids": []], "notice_ids"), (["notice_ids": ["ABC"]], "notice_ids[0]"),
                                  (["notice_ids": [mine[0].id, Self.uuidA.uppercased()]], "notice_ids[1]"),
                                  (["notice_ids": Array(repeating: mine[0].id, count: 101)], "notice_ids"),
                                  (["notice_ids": [3]], "notice_ids[0]"), ([:], "notice_ids")] as [([String: Any], String)] {
                let refused = try await cloud.json(.post, "/v1/device/sync/ack", token: token, body)
                #expect(refused.status == .badRequest && refused.errorMessage.contains("'\(field)'"), "\(body): \(refused.text)")
            }
            for _ in 0..<2 {
                let done = try await cloud.json(.post, "/v1/device/sync/ack", token: token, ["notice_ids": [mine[0].id, mine[0].id]])
                #expect(done.status == .ok && done.object["acknowledged"] as? Int == 1, "\(done.text)")
            }
            let sync = try JSONDecoder().decode(DeviceSync.self, from: Data(buffer: try await cloud.request(.get, "/v1/device/sync", token: token).body))
            #expect(sync.sections.notices?.items == [])
            let theirSync = try JSONDecoder().decode(DeviceSync.self, from: Data(buffer: try await cloud.request(.get, "/v1/device/sync", token: other).body))
            #expect(theirSync.sections.notices?.items.map(\.id) == [theirs[0].id])
        }
    }

    nonisolated(unsafe) static let heartbeat: [String: Any] = [
        "time": "2026-05-10T07:30:00.000Z", "state": "recording", "battery_percent": 80, "strap_battery_percent": 55,
        "sos_monitoring": true, "heart_rate": ["bpm": 142, "time": "2026-05-10T07:29:58.000Z"], "max_hr_bpm": 185,
        "hr_daily": [["date": "2026-05-09", "count": 1200, "min_bpm": 48, "resting_bpm": 52]],
    ]

    @Test("state: the newest heartbeat is kept as sent; a bad one is a 400 naming the field and stores nothing", arguments: Backend.allCases)
    func deviceState(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-1")
            let id = try #require(try await cloud.store.devices.devices().first).id
            func with(_ key: String, _ value: Any) -> [String: Any] {
                var body = Self.heartbeat
                body[key] = value
                return body
            }
            for (body, field) in [(with("state", "running"), "state"), (with("battery_percent", 101), "battery_percent"),
                                  (with("strap_battery_percent", -1), "strap_battery_percent"), (with("time", "yesterday"), "time"),
                                  (with("heart_rate", ["bpm": 400, "time": "2026-05-10T07:29:58.000Z"]), "heart_rate.bpm"),
                                  (with("heart_rate", ["bpm": 140, "time": "1970-01-01T00:00:00Z"]), "heart_rate.time"),
                                  (with("max_hr_bpm", 90), "max_hr_bpm"), (with("sos_monitoring", "yes"), "sos_monitoring"),
                                  (with("in_private_place", "no"), "in_private_place"),
                                  (with("hr_daily", [["date": "2026-13-01", "count": 1]]), "hr_daily[0].date"),
                                  (with("hr_daily", [["date": "2026-05-01", "count": -1]]), "hr_daily[0].count"),
                                  (with("hr_daily", Array(repeating: ["date": "2026-05-01", "count": 1], count: 32)), "hr_daily"),
                                  (Self.heartbeat.filter { $0.key != "sos_monitoring" }, "sos_monitoring")] {
                let refused = try await cloud.json(.put, "/v1/device/state", token: token, body)
                #expect(refused.status == .badRequest && refused.errorMessage.contains("'\(field)'"), "\(field): \(refused.text)")
            }
            #expect(try await cloud.store.sync.deviceState(device: id) == nil)
            let minimal: [String: Any] = ["time": "2026-05-10T07:31:00Z", "state": "idle", "sos_monitoring": false]
            for body in [Self.heartbeat, minimal] {
                let stored = try await cloud.json(.put, "/v1/device/state", token: token, body)
                #expect(stored.status == .ok, "\(stored.text)")
                let kept = try #require(try await cloud.store.sync.deviceState(device: id))
                let decoded = try JSONDecoder().decode(DeviceState.self, from: Data(kept.json.utf8))
                #expect(decoded.state == body["state"] as? String && decoded.sos_monitoring == body["sos_monitoring"] as? Bool)
                #expect(!kept.json.contains("lat") && !kept.json.contains("lon"))
            }
            let last = try JSONDecoder().decode(DeviceState.self, from: Data(try #require(try await cloud.store.sync.deviceState(device: id)).json.utf8))
            #expect(last.heart_rate == nil && last.battery_percent == nil)
        }
    }

    @Test("notice send: to a device by name or to every device of an account; cleaned, bounded, refused by name")
    func noticeSendCommand() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-notices")
        let database = ["--database", "sqlite:" + directory.file("cloud.db")]
        for name in ["pacer-1", "pacer-2", "pacer-3"] { #expect(try await CLITests.run(["device", "add", name] + database).status == 0) }
        let store = try await CloudStore.open(.sqlite(path: directory.file("cloud.db")))
        try await store.migrate()
        let owner = try await Accounts.create(store: store, email: "ann@example.org", password: AccountTests.password, displayName: "Ann",
                                              confirmed: true, cost: AccountTests.cost)
        for name in ["pacer-1", "pacer-2"] { #expect(try await store.devices.assignDevice(name: name, accountID: owner.id)) }

        let one = try await CLITests.run(["notice", "send", "pacer-3", "Rain at five:\u{07} take a jacket"] + database)
        #expect(one.status == 0 && one.stdout.contains("queued: Rain at five: take a jacket"), "\(one.stderr)")
        let all = try await CLITests.run(["notice", "send", "Ann@Example.org", "Well done today"] + database)
        #expect(all.status == 0 && all.stdout.split(separator: "\n").count == 2, "\(all.stdout) \(all.stderr)")
        for refused in [(["notice", "send", "pacer-9", "hi"], "no device is named 'pacer-9'"),
                        (["notice", "send", "bob@example.org", "hi"], "no account has the address 'bob@example.org'"),
                        (["notice", "send", "pacer-1", " \n\t "], "empty"),
                        (["notice", "send", "pacer-1", String(repeating: "a", count: 201)], "at most 200")] {
            let result = try await CLITests.run(refused.0 + database)
            #expect(result.status != 0 && result.stderr.contains(refused.1), "\(result.stderr)")
        }
        let devices = try await store.devices.devices()
        var pending: [String: [String]] = [:]
        for device in devices { pending[device.name] = try await store.sync.pendingNotices(device: device.id, limit: 10).map(\.text) }
        #expect(pending == ["pacer-1": ["Well done today"], "pacer-2": ["Well done today"], "pacer-3": ["Rain at five: take a jacket"]])
    }
}
