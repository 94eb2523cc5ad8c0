import Foundation
import HummingbirdTesting
import PacerCloud
import PacerTestSupport
import Testing

@Suite("pacer-cloud: alerts forwarded by webhook and e-mail")
struct ForwardingTests {
    @Test("each new message goes to the webhook (retried until 2xx) and by e-mail, once", arguments: Backend.allCases)
    func forwarded(backend: Backend) async throws {
        // The webhook fails once: the forward must be retried (after 1 s) and then delivered.
        let webhook = try await offPool { try HTTPSSink(tls: false, rules: .init(status: 200, statusSequence: [500])) }
        let smtp = try await offPool { try SMTPSink() }
        defer {
            webhook.stop()
            smtp.stop()
        }
        let configuration = CloudConfiguration(
            publicURL: "https://cloud.example.org", mail: MailSettings(host: "127.0.0.1", port: Int(smtp.port), from: "sos@example.org"),
            outboxPoll: .milliseconds(200))
        try await Cloud.with(backend, configuration: configuration) { cloud in
            let token = try await cloud.addDevice("pacer-7", email: "relative@example.org", webhook: webhook.url + "/hook")
            let alert = Track.runID()
            let first = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 0))
            let page = try #require(first.object["page"] as? String)
            #expect(page.hasPrefix("https://cloud.example.org/a/"))
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 0)).status == .ok)
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 1, type: "cancelled")).status == .created)

            let requests = try await offPool { webhook.waitForRequests(count: 3, timeout: .seconds(15)) }
            #expect(requests.count == 3)  // 500, the retry, the cancel
            #expect(requests.allSatisfy { $0.method == "POST" && $0.path == "/hook" })
            let delivered = requests.filter { $0.status == 200 }
            let bodies = delivered.compactMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] }
            #expect(Set(bodies.compactMap { ($0["message"] as? [String: Any])?["sequence"] as? Int }) == [0, 1])
            #expect(bodies.allSatisfy { $0["page"] as? String == page && $0["device"] as? String == "pacer-7" })

            let mails = try await offPool { smtp.waitForMessages(count: 2, timeout: .seconds(15)) }
            #expect(mails.count == 2)
            #expect(mails.allSatisfy { $0.recipients == ["relative@example.org"] && $0.mailFrom == "sos@example.org" })
            #expect(mails.contains { $0.data.contains("Subject: SOS (pacer-7): high heart rate") && $0.data.contains(page) })
            #expect(mails.contains { $0.data.contains("false alarm") })

            // Everything delivered, nothing sent twice.
            try await Task.sleep(for: .milliseconds(500))
            let outbox = try await cloud.store.outbox()
            #expect(outbox.count == 4)
            #expect(outbox.allSatisfy { $0.deliveredMs != nil })
            #expect(outbox.first { $0.channel == "webhook" }?.attempts == 2)
            #expect(webhook.requests().count == 3)
            #expect(smtp.messages().count == 2)
        }
    }
}
