import CloudStore
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Something a dashboard (or a device waiting for answers) may want to re-read: which runner's
/// account it concerns, what kind of change, and the device (or, for consent, the monitor) it
/// is about. Ids only: a listener re-reads the store, so the event stays far below NOTIFY's
/// 8000-byte payload limit and carries nothing personal.
public struct HubEvent: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        case position, alert, answer, consent, state
        /// A race's new frame: `account` is the race id, `subject` the frame's number.
        case race
    }

    public var kind: Kind
    /// The runner's account id.
    public var account: String
    /// A device id (position, alert, answer, state) or the monitor's account id (consent).
    public var subject: String

    public init(kind: Kind, account: String, subject: String) {
        self.kind = kind
        self.account = account
        self.subject = subject
    }
}

/// What a subscription receives: hub events, and the ticks and end its owner adds.
public enum HubSignal: Sendable, Equatable {
    case event(HubEvent)
    case heartbeat
}

/// One listener's events: a bounded buffer (the oldest go when it is full, since every event
/// only says "re-read this", a newer one of the same runner makes up for it).
public final class HubSubscription: Sendable {
    public let signals: AsyncStream<HubSignal>
    let continuation: AsyncStream<HubSignal>.Continuation

    init(bufferingNewest limit: Int, onEnd: @escaping @Sendable () -> Void) {
        (signals, continuation) = AsyncStream.makeStream(of: HubSignal.self, bufferingPolicy: .bufferingNewest(limit))
        continuation.onTermination = { _ in onEnd() }
    }

    func yield(_ signal: HubSignal) { continuation.yield(signal) }
    /// Ends the stream: its reader's loop stops.
    public func end() { continuation.finish() }
}

/// The in-process part of every hub: hands an event to each subscription of this instance.
final class LocalFanOut: Sendable {
    private let subscriptions = Mutex<[UUID: HubSubscription]>([:])

    func subscribe(bufferingNewest limit: Int) -> HubSubscription {
        let id = UUID()
        let subscription = HubSubscription(bufferingNewest: limit) { [weak self] in
            _ = self?.subscriptions.withLock { $0.removeValue(forKey: id) }
        }
        subscriptions.withLock { $0[id] = subscription }
        return subscription
    }

    func deliver(_ event: HubEvent) {
        for subscription in subscriptions.withLock({ Array($0.values) }) { subscription.yield(.event(event)) }
    }

    var count: Int { subscriptions.withLock { $0.count } }
}

/// Fans events out to every listener of every instance sharing the store. Owned by monitoring,
/// meant to be reused by races.
public protocol EventHub: Sendable {
    /// Sends the event to every subscription of every instance (this one included).
    func publish(_ event: HubEvent) async
    func subscribe(bufferingNewest limit: Int) -> HubSubscription
}

/// One instance (SQLite): the fan-out stays in process.
public final class LocalEventHub: EventHub {
    private let fanOut = LocalFanOut()
    public init() {}
    public func publish(_ event: HubEvent) async { fanOut.deliver(event) }
    public func subscribe(bufferingNewest limit: Int) -> HubSubscription { fanOut.subscribe(bufferingNewest: limit) }
}

/// Several instances on one PostgreSQL: `publish` is a NOTIFY, and each instance LISTENs on one
/// connection of its pool and hands what arrives to its own subscriptions, its own events
/// included (so every dashboard sees events in the database's one order).
public final class PostgresEventHub: EventHub, Service {
    static let channel = "pacer_events"
    private let client: PostgresClient
    private let logger: Logger
    private let fanOut = LocalFanOut()
    private let listening = Atomic<Bool>(false)

    public init(client: PostgresClient, logger: Logger = Logger(label: "pacer-cloud.hub")) {
        self.client = client
        self.logger = logger
    }

    /// True while the LISTEN is in place (tests wait for it before publishing elsewhere).
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    public func waitUntilListening(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !isListening {
            guard ContinuousClock.now < deadline else { throw StoreError("the event hub could not LISTEN on PostgreSQL within \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    public func publish(_ event: HubEvent) async {
        guard let payload = try? String(decoding: JSONEncoder().encode(event), as: UTF8.self) else { return }
        do {
            try await client.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
        } catch {
            // A lost event only delays a dashboard until the next one: the store has the data.
            logger.warning("could not publish a \(event.kind.rawValue) event: \(String(describing: error))")
        }
    }

    public func subscribe(bufferingNewest limit: Int) -> HubSubscription { fanOut.subscribe(bufferingNewest: limit) }

    /// Listens until cancelled or shut down, listening again a second after a lost connection.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await self.client.withConnection { connection in
                        try await connection.listen(on: Self.channel) { notifications in
                            self.listening.store(true, ordering: .releasing)
                            for try await notification in notifications {
                                guard let event = try? JSONDecoder().decode(HubEvent.self, from: Data(notification.payload.utf8)) else { continue }
                                self.fanOut.deliver(event)
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    self.logger.warning("event hub: listening failed, again in 1 s: \(String(describing: error))")
                }
                self.listening.store(false, ordering: .releasing)
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
