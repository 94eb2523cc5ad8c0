import Foundation
import HummingbirdTesting
import PacerCloud
import PacerTestSupport
import Testing

@Suite("pacer-cloud: alerts forwarded by webhook and e-mail", .timeLimit(.minutes(10)))
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
            #expect(mails.contains { $0.data.contains("Subject: SOS from pacer-7: high heart rate") && $0.data.contains(page) })
            #expect(mails.contains { $0.data.contains("false alarm") })

            // Everything delivered (the mark is written once the sink answered: waited for, not
            // slept for, so a loaded machine does not race it), nothing sent twice.
            let allDelivered = await eventually(timeout: .seconds(15)) {
                (try? await cloud.store.outbox.outbox())?.allSatisfy { $0.deliveredMs != nil } == true
            }
            let outbox = try await cloud.store.outbox.outbox()
            #expect(outbox.count == 4)
            #expect(allDelivered && outbox.allSatisfy { $0.deliveredMs != nil })
            #expect(outbox.first { $0.channel == "webhook" }?.attempts == 2)
            #expect(webhook.requests().count == 3)
            #expect(smtp.messages().count == 2)
        }
    }

    @Test("webhooks carry Pacer-Signature, checked by tools/verify-webhook; a tampered body or stale time fails",
          arguments: Backend.allCases)
    func signed(backend: Backend) async throws {
        let webhook = try await offPool { try HTTPSSink(tls: false, rules: .init(status: 200, statusSequence: [503])) }
        defer { webhook.stop() }
        let configuration = CloudConfiguration(publicURL: "https://cloud.example.org", outboxPoll: .milliseconds(200))
        try await Cloud.with(backend, configuration: configuration) { cloud in
            let added = try await CloudApplication.addDevice(store: cloud.store, name: "pacer-7", email: nil, webhook: webhook.url + "/hook")
            let secret = try #require(added.webhookSecret)
            let other = try await CloudApplication.addDevice(store: cloud.store, name: "pacer-8", email: nil, webhook: webhook.url + "/hook")
            #expect(other.webhookSecret != secret)
            #expect(try await cloud.addDevice("pacer-9").isEmpty == false)  // no webhook: no secret needed
            #expect(try await CloudApplication.addDevice(store: cloud.store, name: "pacer-10", email: nil, webhook: nil).webhookSecret == nil)

            #expect(try await cloud.json(.post, "/v1/alerts", token: added.token, AlertTests.message(Track.runID(), 0)).status == .created)
            // The first attempt fails (503); the retry is signed anew, with its own time.
            let requests = try await offPool { webhook.waitForRequests(count: 2, timeout: .seconds(15)) }
            #expect(requests.count == 2)
            let directory = try TemporaryDirectory(prefix: "pacer-webhook")
            for request in requests {
                #expect(request.headerCount(WebhookSignature.header) == 1)
                let signature = try #require(request.header(WebhookSignature.header))
                let stamp = try #require(Int(signature.split(separator: ",").first?.dropFirst(2) ?? ""))
                #expect(abs(stamp - Int(request.time)) <= 2)
                try Data(request.body).write(to: URL(fileURLWithPath: directory.file("body")))
                let good = try await Self.verify(secret: secret, signature: signature, body: directory.file("body"))
                #expect(good.succeeded, "\(good)")
                #expect(good.standardOutput == "ok\n")
                // The other device's secret, a changed byte, a time 301 s later: each refused.
                let wrongKey = try await Self.verify(secret: try #require(other.webhookSecret), signature: signature, body: directory.file("body"))
                #expect(wrongKey.status == .exited(1) && wrongKey.standardError.contains("no v1 signature matches"))
                var tampered = request.body
                let index = try #require(tampered.firstIndex(of: UInt8(ascii: "7")))
                tampered[index] = UInt8(ascii: "8")
                try Data(tampered).write(to: URL(fileURLWithPath: directory.file("tampered")))
                let forged = try await Self.verify(secret: secret, signature: signature, body: directory.file("tampered"))
                #expect(forged.status == .exited(1) && forged.standardError.contains("no v1 signature matches"))
                let stale = try await Self.verify(secret: secret, signature: signature, body: directory.file("body"), now: stamp + 301)
                #expect(stale.status == .exited(1) && stale.standardError.contains("more than 300 s"))
                let justInTime = try await Self.verify(secret: secret, signature: signature, body: directory.file("body"), now: stamp + 300)
                #expect(justInTime.succeeded)
            }
            // The signer itself against a fixed vector computed by Python's hmac (tools/verify-webhook's way).
            #expect(WebhookSignature.value(secret: "s3cret", timestamp: 1_778_398_200, body: Array(#"{"a":1}"#.utf8))
                == "t=1778398200,v1=" + (try await Self.pythonHMAC(key: "s3cret", message: #"1778398200.{"a":1}"#)))
        }
    }

    static func verify(secret: String, signature: String, body: String, now: Int? = nil) async throws -> CommandResult {
        let script = DaemonFixture.repositoryRoot + "/tools/verify-webhook"
        // `--name=value`: a random secret may begin with "-", which argparse would take for an option.
        let arguments = ["--secret=" + secret, "--signature=" + signature, "--body=" + body] + (now.map { ["--now=" + String($0)] } ?? [])
        return try await offPool { try BlockingCommand.run(script, arguments) }
    }

    static func pythonHMAC(key: String, message: String) async throws -> String {
        let code = "import hmac, hashlib, sys; print(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).hexdigest())"
        let result = try await offPool { try BlockingCommand.run("/usr/bin/env", ["python3", "-c", code, key, message]) }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
