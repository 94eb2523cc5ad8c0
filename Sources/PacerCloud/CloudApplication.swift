import CloudModel
import CloudStore
import Foundation
import Hummingbird
import Logging
import PacerContract
import ServiceLifecycle
import Threads

/// pacer-cloud assembled: the store (migrated before the server accepts requests), the router
/// and the forwarder, as one Hummingbird application. Stateless: any number of these can share
/// one PostgreSQL.
public enum CloudApplication {
    public static func make(
        store: CloudStore, configuration: CloudConfiguration, host: String = "127.0.0.1", port: Int = 8080,
        logger: Logger = Logger(label: "pacer-cloud"), now: @escaping @Sendable () -> Duration = RateLimiter.monotonicNow,
        wallClock: @escaping @Sendable () -> Int64 = SessionSettings.systemClock
    ) throws(ConfigurationError) -> some ApplicationProtocol {
        let forwarder = Forwarder(store: store, configuration: configuration)
        // One instance on SQLite: events stay in process. On PostgreSQL they go through
        // LISTEN/NOTIFY, so a dashboard on any instance sees what reached another.
        let postgresHub = store.database.postgresClient.map { PostgresEventHub(client: $0, logger: logger) }
        let hub: any EventHub = postgresHub ?? LocalEventHub()
        let routes = CloudRoutes(store: store, configuration: configuration, linkBase: try configuration.linkBase(host: host, port: port),
                                 now: now, wallClock: wallClock, wakeForwarder: { forwarder.wake() }, hub: hub)
        // Every connection is a file descriptor, and running out of them crashed the process:
        // the caps must fit under the open-file limit, raised as far as it goes first.
        let descriptorLimit = DescriptorLimit.raiseSoftToHard()
        let fitted = configuration.connections.fitted(descriptorLimit: descriptorLimit)
        guard let limits = fitted.limits else { throw ConfigurationError(fitted.message ?? "the open-file limit is too low") }
        if let message = fitted.message { logger.warning("\(message)") }
        let gate = ConnectionGate(limits: limits, exempt: configuration.trustedProxies, logger: logger,
                                  metrics: configuration.metrics)
        var services: [any Service] = [forwarder] + routes.services
        if let postgresHub { services.insert(postgresHub, at: 0) }
        services.insert(store.database, at: 0)
        // /metrics: the store's database times, and the listener of its own when one is set.
        store.database.queries.attach(configuration.metrics)
        if let listen = configuration.metricsAccess.listen {
            services.append(MetricsEndpoint.application(host: listen.host, port: listen.port, token: configuration.metricsAccess.token,
                                                        metrics: configuration.metrics, logger: logger))
        }
        var app = Application(
            router: routes.router(),
            server: LimitedHTTP1Channel.builder(gate: gate),
            configuration: .init(address: .hostname(host, port: port), serverName: "pacer-cloud"),
            services: services,
            logger: logger)
        app.beforeServerStarts {
            try await store.migrate()
            // Requests are taken once events from other instances can reach this one.
            try await postgresHub?.waitUntilListening(timeout: .seconds(10))
            forwarder.markReady()
            routes.raceFrames.markReady()
        }
        return app
    }

    /// Registers a device; returns it, its bearer token (which exists only in this answer) and,
    /// with a webhook, the secret its webhooks are signed with (`WebhookSignature`).
    public static func addDevice(store: CloudStore, name: String, email: String?, webhook: String?) async throws
        -> (device: Device, token: String, webhookSecret: String?) {
        guard !name.isEmpty, name.count <= 64, !name.contains(where: { $0.isNewline }) else {
            throw StoreError("a device name must be 1 to 64 characters on one line")
        }
        // Reserved for the accounts' devices of imported runs (CloudRoutes+Files).
        guard !name.hasPrefix("imported:") else { throw StoreError("device names beginning with 'imported:' are reserved for imported runs") }
        if let email, email.split(separator: "@").count != 2 || email.contains(where: { $0.isWhitespace || "<>\"".contains($0) }) {
            throw StoreError("--email '\(email)' is not an e-mail address like name@example.org")
        }
        if let webhook {
            guard let url = URL(string: webhook), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw StoreError("--webhook '\(webhook)' is not an http(s) URL")
            }
        }
        let token = Tokens.random()
        let device = Device(id: UUID().uuidString.lowercased(), name: name, email: email, webhook: webhook,
                            createdAt: WireTime.text(milliseconds: WallClock.milliseconds()))
        let webhookSecret = webhook == nil ? nil : Tokens.random()
        try await store.devices.addDevice(device, tokenHash: Tokens.hash(token), webhookSecret: webhookSecret)
        return (device, token, webhookSecret)
    }
}
