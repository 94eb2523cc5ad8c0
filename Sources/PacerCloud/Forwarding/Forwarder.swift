import AsyncHTTPClient
import CloudModel
import CloudStore
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Threads

/// Sends the outbox: webhook POSTs and e-mails for new alert messages, each retried with
/// backoff until delivered (2xx, or the SMTP server's 250 for the message). The outbox is in
/// the database, so a restart carries on, and items are leased, so instances sharing a
/// PostgreSQL do not send one item twice at once (a crash mid-send may send it again:
/// at least once).
public final class Forwarder: Service {
    private let store: CloudStore
    private let configuration: CloudConfiguration
    private let logger: Logger
    private let woken = Atomic<Bool>(false)
    /// Set once the schema is migrated: before that the outbox may not exist yet (and a
    /// PostgreSQL pool may not be running yet).
    private let ready = Atomic<Bool>(false)

    public init(store: CloudStore, configuration: CloudConfiguration, logger: Logger = Logger(label: "pacer-cloud.forwarder")) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
    }

    /// Look at the outbox now (a new alert message was recorded).
    public func wake() { woken.store(true, ordering: .releasing) }

    /// The store is migrated: start sending.
    public func markReady() {
        ready.store(true, ordering: .releasing)
        wake()
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if self.ready.load(ordering: .acquiring) { await self.drain() }
                await self.pause()
            }
        }
    }

    /// Sends everything due now, once.
    public func drain() async {
        do {
            let now = WallClock.milliseconds()
            // A lease longer than one attempt can take (10 s timeouts).
            let items = try await store.outbox.claimOutbox(nowMs: now, leaseUntilMs: now + 60_000, limit: 20)
            for item in items { await deliver(item) }
            // The gauges as this pass leaves the outbox (any instance's items: they share it).
            let probed = ContinuousClock.now
            let status = try await store.outbox.outboxStatus(nowMs: WallClock.milliseconds())
            configuration.metrics.databaseProbe(store: store.database.dialect.rawValue, duration: .now - probed)
            configuration.metrics.outbox(pending: status.pending, lagSeconds: Double(status.lagMs) / 1000)
        } catch {
            logger.error("outbox: \(String(reflecting: error))")
        }
    }

    private func pause() async {
        // Short naps so a wake() is seen within 50 ms without a second wake-up mechanism.
        let deadline = ContinuousClock.now + configuration.outboxPoll
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if woken.exchange(false, ordering: .acquiring) { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private func deliver(_ item: OutboxItem) async {
        do {
            switch item.channel {
            case "webhook": try await postWebhook(item)
            case "email": try await sendEmail(item)
            default: throw StoreError("unknown channel \(item.channel)")
            }
            try await store.outbox.outboxDelivered(id: item.id, nowMs: WallClock.milliseconds())
            configuration.metrics.forwarded(channel: item.channel, delivered: true)
            logger.info("forwarded by \(item.channel) to \(item.target) (attempt \(item.attempts + 1))")
        } catch {
            configuration.metrics.forwarded(channel: item.channel, delivered: false)
            let attempt = item.attempts + 1
            let maxMs = Int64(configuration.retryMax.components.seconds * 1000)
            let backoffMs = min(maxMs, Int64(1000) << min(attempt - 1, 20))
            logger.warning("forwarding by \(item.channel) to \(item.target) failed (attempt \(attempt)), retrying in \(backoffMs) ms: \(String(reflecting: error))")
            try? await store.outbox.outboxFailed(id: item.id, error: String(reflecting: error), nextAttemptMs: WallClock.milliseconds() + backoffMs)
        }
    }

    private func postWebhook(_ item: OutboxItem) async throws {
        var request = HTTPClientRequest(url: item.target)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "pacer-cloud")
        if let secret = item.signingSecret {
            request.headers.add(name: WebhookSignature.header, value: WebhookSignature.value(
                secret: secret, timestamp: WallClock.milliseconds() / 1000, body: Array(item.payload.utf8)))
        }
        request.body = .bytes(ByteBuffer(string: item.payload))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        _ = try? await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(response.status.code) else { throw StoreError("the webhook answered \(response.status.code)") }
    }

    private func sendEmail(_ item: OutboxItem) async throws {
        guard let mail = configuration.mail else { throw StoreError("no --smtp server configured") }
        let email = try JSONDecoder().decode(Forwarding.Email.self, from: Data(item.payload.utf8))
        try await SMTPClient(mail).send(from: email.from, to: email.to, subject: email.subject, text: email.text)
    }
}
