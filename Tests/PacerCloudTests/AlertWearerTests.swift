@testable import CloudModel
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerCore
import PacerTestSupport
import Testing

/// Issue #30 item 8: every alert says who (the wearer, then the device), where (the last
/// positions on a map) and when ("20:45 (3 min ago)" in the reader's zone, else the wearer's):
/// the e-mail, the webhook, the alert page and the dashboard.
@Suite("pacer-cloud: alerts name the wearer and say when in the reader's zone", .timeLimit(.minutes(10)))
struct AlertWearerTests {
    /// Mail and a webhook that are never sent (the outbox polls once an hour): the payloads are
    /// read from the outbox as recorded.
    static func configuration(tiles: String? = MapSettings.defaultTileURL) -> CloudConfiguration {
        var configuration = CloudConfiguration(publicURL: "https://cloud.example.org",
                                               mail: MailSettings(host: "127.0.0.1", port: 9, from: "sos@example.org"), outboxPoll: .seconds(3600),
                                               passwordCost: AccountTests.cost)
        configuration.map.tileURL = tiles
        return configuration
    }

    static func path(_ reply: TestResponse) throws -> String {
        let page = try #require(reply.object["page"] as? String)
        return "/" + page.split(separator: "/").suffix(2).joined(separator: "/")
    }

    static func mail(_ item: OutboxItem) throws -> [String: String] {
        try #require(try JSONSerialization.jsonObject(with: Data(item.payload.utf8)) as? [String: String])
    }

    @Test("a device's [profile] name: named first in the e-mail, the webhook and the page, cleaned; times in UTC, said so",
          arguments: Backend.allCases)
    func theDevicesName(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.configuration()) { cloud in
            let token = try await cloud.addDevice("pacer-eazge", email: "relative@example.org", webhook: "https://hooks.example.org/sos")
            var message = AlertTests.message(Track.runID(), 0)
            message["device"] = "anna-pacer"
            // A right-to-left override and a zero-width space would turn the text around it.
            message["wearer"] = "Anna\u{202E} Rossi\u{200B}"
            let reply = try await cloud.json(.post, "/v1/alerts", token: token, message)
            #expect(reply.status == .created)

            let outbox = try await cloud.store.outbox.outbox()
            let mail = try Self.mail(try #require(outbox.first { $0.channel == "email" }))
            #expect(mail["subject"] == "SOS from Anna Rossi (anna-pacer): high heart rate")
            let text = try #require(mail["text"])
            // No zone known for an unlinked device: UTC, said so; the date, as it is not today (and the year when not this one).
            #expect(text.hasPrefix("SOS from Anna Rossi (anna-pacer): high heart rate, 07:37 UTC on 10 May"), "\(text)")
            #expect(text.contains("Who: Anna Rossi, wearing the device anna-pacer."))
            #expect(text.contains("Position: https://www.openstreetmap.org/?mlat=45.477910&mlon=9.224140, 07:37 UTC on 10 May"))
            #expect(!text.contains("2026-05-10T07:37"), "an ISO time is left in the e-mail: \(text)")
            #expect(!text.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{200B}" })

            let webhook = try #require(outbox.first { $0.channel == "webhook" })
            let hook = try #require(try JSONSerialization.jsonObject(with: Data(webhook.payload.utf8)) as? [String: Any])
            #expect(hook["device"] as? String == "pacer-eazge")  // its name here, as before
            #expect(hook["wearer"] as? String == "Anna Rossi")
            #expect((hook["summary"] as? String)?.hasPrefix("SOS from Anna Rossi (anna-pacer): high heart rate, 07:37 UTC on 10 May") == true)
            #expect((hook["message"] as? [String: Any])?["wearer"] as? String == "Anna\u{202E} Rossi\u{200B}")  // as received

            let html = try await cloud.request(.get, try Self.path(reply), token: nil).text
            #expect(html.contains("<h1>SOS from Anna Rossi (anna-pacer): high heart rate</h1>"), "\(html)")
            #expect(html.contains("<title>SOS from Anna Rossi (anna-pacer): high heart rate</title>"))
            #expect(html.contains("<dt>Who</dt><dd>Anna Rossi</dd>"))
            #expect(html.contains("<dt>Device</dt><dd>anna-pacer</dd>"))
            #expect(html.contains("<dt>Raised</dt><dd>07:37 UTC on 10 May"))
            #expect(!html.contains("2026-05-10T07:37"), "an ISO time is left on the page")
            #expect(!html.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{200B}" })
        }
    }

    @Test("a device of an account: the account's display name wins, times in the account's zone; each monitor's e-mail in the monitor's",
          arguments: Backend.allCases)
    func theAccountsName(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.configuration()) { cloud in
            let anna = try await Accounts.create(store: cloud.store, email: "anna@example.org", password: AccountTests.password,
                                                 displayName: "Anna Bianchi", timezone: "Europe/Rome", confirmed: true, cost: AccountTests.cost)
            let son = try await Accounts.create(store: cloud.store, email: "son@example.org", password: "the son's own long password",
                                                displayName: "Marco", timezone: "America/New_York", confirmed: true, cost: AccountTests.cost)
            let invite = MonitorInvite(hash: String(repeating: "ab", count: 32), runnerID: anna.id, email: son.email, createdMs: 0,
                                       expiresMs: Int64.max / 2)
            try await cloud.store.monitoring.addMonitorInvite(invite, mail: OutboxMail(to: son.email, payload: #"{"from":"a@b.c","subject":"Invitation","text":"-","to":"son@example.org"}"#))
            #expect(try await cloud.store.monitoring.acceptMonitorInvite(hash: invite.hash, monitorID: son.id, nowMs: 1) == anna.id)
            let token = try await cloud.addDevice("anna-pacer", email: "anna@example.org")
            #expect(try await cloud.store.devices.assignDevice(name: "anna-pacer", accountID: anna.id))

            var message = AlertTests.message(Track.runID(), 0)
            message["wearer"] = "Nonna"
            let reply = try await cloud.json(.post, "/v1/alerts", token: token, message)
            #expect(reply.status == .created)
            let mails = try await cloud.store.outbox.outbox().filter { $0.channel == "email" && $0.payload.contains("SOS from") }
            let toAnna = try Self.mail(try #require(mails.first { $0.target == "anna@example.org" }))
            let toSon = try Self.mail(try #require(mails.first { $0.target == "son@example.org" }))
            #expect(toAnna["subject"] == "SOS from Anna Bianchi (pacer-7): high heart rate")
            #expect(toSon["subject"] == "SOS from Anna Bianchi (pacer-7): high heart rate")
            // 07:37 UTC in May: 09:37 in Rome, 03:37 in New York.
            #expect(toAnna["text"]?.hasPrefix("SOS from Anna Bianchi (pacer-7): high heart rate, 09:37 on 10 May") == true, "\(toAnna)")
            #expect(toSon["text"]?.hasPrefix("SOS from Anna Bianchi (pacer-7): high heart rate, 03:37 on 10 May") == true, "\(toSon)")

            // The page's reader is not known: the wearer's zone.
            let html = try await cloud.request(.get, try Self.path(reply), token: nil).text
            #expect(html.contains("<dt>Who</dt><dd>Anna Bianchi</dd>"))
            #expect(!html.contains("Nonna"))
            #expect(html.contains("<dt>Raised</dt><dd>09:37 on 10 May"))
        }
    }

    @Test("an old device without a name still works: the device alone; a name past 64 characters is refused, naming the field",
          arguments: Backend.allCases)
    func withoutAName(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.configuration()) { cloud in
            let token = try await cloud.addDevice("pacer-7", email: "relative@example.org")
            let reply = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0))
            #expect(reply.status == .created)
            let mail = try Self.mail(try #require(try await cloud.store.outbox.outbox().first))
            #expect(mail["subject"] == "SOS from pacer-7: high heart rate")
            #expect(mail["text"]?.contains("Who:") == false)
            let html = try await cloud.request(.get, try Self.path(reply), token: nil).text
            #expect(html.contains("<h1>SOS from pacer-7: high heart rate</h1>"))
            #expect(!html.contains("<dt>Who</dt>"))

            var long = AlertTests.message(Track.runID(), 0)
            long["wearer"] = String(repeating: "a", count: WearerName.maxLength + 1)
            let refused = try await cloud.json(.post, "/v1/alerts", token: token, long)
            #expect(refused.status == .badRequest)
            #expect(((refused.object["error"] as? [String: Any])?["message"] as? String)?.contains("wearer") == true)
        }
    }

    @Test("the page maps the last positions, the newest with its age; tiles as the run page's, none in the none mode",
          arguments: [MapSettings.defaultTileURL, nil] as [String?])
    func theMap(tiles: String?) async throws {
        try await Cloud.with(.sqlite, configuration: Self.configuration(tiles: tiles)) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let alert = Track.runID()
            let reply = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 0))
            let followUp = AlertTests.message(alert, 1, type: "follow_up", position: ["lat": 45.48001, "lon": 9.23002, "time": "2026-05-10T07:38:00.000Z"])
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, followUp).status == .created)
            let page = try await cloud.request(.get, try Self.path(reply), token: nil)
            let html = page.text
            #expect(html.contains(#"<div id="map" data-tiles="\#(tiles ?? "")""#), "\(html)")
            #expect(html.contains(#"<script src="/assets/leaflet/leaflet.js"></script><script src="/assets/pacer/alert.js"></script>"#))
            #expect(html.contains(#"<link rel="stylesheet" href="/assets/leaflet/leaflet.css"><link rel="icon" href="data:,">"#))
            let data = try #require(html.split(separator: #"id="alert-data">"#).last?.split(separator: "</script>").first)
            let decoded = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
            #expect(decoded["positions"] as? [[Double]] == [[45.47791, 9.22414], [45.48001, 9.23002]])
            #expect((decoded["times"] as? [String])?.last?.hasPrefix("07:38 UTC on 10 May") == true)
            #expect(html.contains(#"<span id="position-age">07:38 UTC on 10 May"#))
            // Scripts from the server only, images from the tile server; the origin alone as referrer.
            let policy = page.headers[.contentSecurityPolicy] ?? ""
            #expect(policy.contains("script-src 'self';") && !policy.contains("unsafe"))
            #expect(policy.contains(tiles == nil ? "img-src 'self' data:;" : "img-src 'self' data: https://tile.openstreetmap.org;"), "\(policy)")
            #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "strict-origin")
            #expect(html.contains(#"<meta name="referrer" content="strict-origin">"#))
            let script = try await cloud.request(.get, "/assets/pacer/alert.js", token: nil)
            #expect(script.status == .ok && script.text.contains("alert-data"))

            // Without any position there is no map, and nothing to load for one.
            let blind = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0, position: nil))
            let plain = try await cloud.request(.get, try Self.path(blind), token: nil).text
            #expect(!plain.contains("<script") && !plain.contains(#"id="map""#))
            #expect(plain.contains("<dt>Last position</dt><dd>not known</dd>"))
        }
    }

    @Test("the e-mail writes times in the reader's zone, the webhook's summary in the wearer's")
    func forwardingUnits() throws {
        let message = AlertBody(alert_id: "0f8e4c1a-93b2-4d6e-8a7f-1c2d3e4f5a6b", sequence: 1, type: "follow_up", test: false, kind: "hr_low",
                                time: "2026-11-27T19:45:45.597Z", raised_at: nil, first_out_of_range: nil, device: "anna-pacer", run_id: nil,
                                heart_rate: nil, position: nil, battery_percent: nil, sms: nil, wearer: "Anna")
        let now = Int64(1_795_808_925_597)  // 2026-11-27T19:48:45.597Z: three minutes later
        let words = AlertWords(wearer: "Anna Rossi", device: "anna-pacer", wearerZone: "Europe/Rome")
        let rome = try JSONSerialization.jsonObject(with: Data(Forwarding.emailPayload(from: "a@b.c", to: "d@e.f", words: words, page: "P",
                                                                                      message: message, nowMs: now).utf8)) as? [String: String]
        #expect(rome?["subject"] == "SOS update from Anna Rossi (anna-pacer): low heart rate")
        #expect(rome?["text"]?.hasPrefix("Update on the SOS from Anna Rossi (anna-pacer): low heart rate, 20:45 (3 min ago).") == true, "\(String(describing: rome))")
        let tokyo = try JSONSerialization.jsonObject(with: Data(Forwarding.emailPayload(from: "a@b.c", to: "d@e.f", words: words, page: "P",
                                                                                       message: message, nowMs: now, readerZone: "Asia/Tokyo").utf8)) as? [String: String]
        #expect(tokyo?["text"]?.hasPrefix("Update on the SOS from Anna Rossi (anna-pacer): low heart rate, 04:45 (3 min ago).") == true, "\(String(describing: tokyo))")
        let hook = Forwarding.webhookPayload(device: "pacer-eazge", words: words, page: "P", message: message, messageJSON: "{}", nowMs: now)
        #expect(hook.contains(#""summary":"Update on the SOS from Anna Rossi (anna-pacer): low heart rate, 20:45 (3 min ago).""#), "\(hook)")
        #expect(hook.contains(#""wearer":"Anna Rossi""#))
    }
}
