import CloudStore
import CoreMetrics
import Prometheus

/// What one pacer-cloud process counts, for `/metrics` (Prometheus' text format). One per
/// application, not the process-wide `MetricsSystem`: tests run many applications in one
/// process, and each must see its own counts. The metrics are swift-metrics' types made with
/// this instance's factory, kept in its own swift-prometheus registry.
///
/// Labels come from closed sets only (route patterns, methods, status codes, limit and channel
/// names), never from a raw path or a client's input, so the series stay bounded.
///
/// Other code updates the gauges through the functions below, e.g. a connection handler calls
/// `configuration.metrics.connectionOpened()` on accept and `connectionClosed()` when the
/// connection ends.
public final class CloudMetrics: QueryTimeRecorder, Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    private let openConnections: Meter
    private let refusedConnections: CoreMetrics.Counter
    private let openStreams: Meter
    private let outboxPending: Meter
    private let outboxLag: Meter

    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Request latencies: from a fast read (ms) to a large import (tens of seconds).
        factory.durationHistogramBuckets[Names.requestDuration] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
        ]
        // One statement, or the probe's round trip: sub-millisecond on SQLite.
        let databaseBuckets: [Duration] = [
            .microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        factory.durationHistogramBuckets[Names.databaseDuration] = databaseBuckets
        factory.durationHistogramBuckets[Names.databaseProbe] = databaseBuckets
        self.registry = registry
        self.factory = factory
        openConnections = Meter(label: Names.openConnections, factory: factory)
        refusedConnections = CoreMetrics.Counter(label: Names.refusedConnections, factory: factory)
        openStreams = Meter(label: Names.openStreams, factory: factory)
        outboxPending = Meter(label: Names.outboxPending, factory: factory)
        outboxLag = Meter(label: Names.outboxLag, factory: factory)
    }

    enum Names {
        static let requests = "pacer_cloud_http_requests_total"
        static let requestDuration = "pacer_cloud_http_request_duration_seconds"
        static let inFlight = "pacer_cloud_http_requests_in_flight"
        static let openConnections = "pacer_cloud_open_connections"
        static let refusedConnections = "pacer_cloud_refused_connections_total"
        static let openStreams = "pacer_cloud_open_streams"
        static let rateLimitRefusals = "pacer_cloud_rate_limit_refusals_total"
        static let outboxPending = "pacer_cloud_outbox_pending"
        static let outboxLag = "pacer_cloud_outbox_lag_seconds"
        static let forwards = "pacer_cloud_forwards_total"
        static let databaseDuration = "pacer_cloud_database_seconds"
        static let databaseProbe = "pacer_cloud_database_probe_seconds"
    }

    // MARK: Connections and streams (a gauge each; call the pairs exactly once per open).

    /// A client connection was accepted.
    public func connectionOpened() { openConnections.increment() }
    /// A client connection ended (after `connectionOpened`).
    public func connectionClosed() { openConnections.decrement() }
    /// A connection was refused at accept (a cap was reached).
    public func connectionRefused() { refusedConnections.increment() }
    /// A long-lived response began (a dashboard's event stream).
    public func streamOpened() { openStreams.increment() }
    /// It ended.
    public func streamClosed() { openStreams.decrement() }

    // MARK: Requests

    /// A request started on `route` (the matched pattern): the in-flight gauge, e.g. long-polls.
    func requestStarted(route: String) -> Meter {
        let meter = Meter(label: Names.inFlight, dimensions: [("route", route)], factory: factory)
        meter.increment()
        return meter
    }

    /// A request's answer on `route` (the matched pattern), its status and its time to the end of the body.
    func requestFinished(route: String, method: String, status: Int, duration: Duration) {
        CoreMetrics.Counter(label: Names.requests, dimensions: [("route", route), ("method", method), ("status", String(status))],
                            factory: factory).increment()
        CoreMetrics.Timer(label: Names.requestDuration, dimensions: [("route", route), ("method", method)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    // MARK: Rate limits, forwarding, database

    /// A request refused by a rate limit (`what`: the limit's fixed name, e.g. "uploads").
    public func rateLimitRefused(_ what: String) {
        CoreMetrics.Counter(label: Names.rateLimitRefusals, dimensions: [("limit", what)], factory: factory).increment()
    }

    /// The outbox after a forwarding pass: items not yet delivered, and how long the most
    /// overdue due item has waited past its time (0 when none is due).
    func outbox(pending: Int, lagSeconds: Double) {
        outboxPending.set(pending)
        outboxLag.set(lagSeconds)
    }

    /// One forward attempt by `channel` ("webhook", "email"): delivered or failed.
    func forwarded(channel: String, delivered: Bool) {
        let known = ["webhook", "email"].contains(channel) ? channel : "other"
        CoreMetrics.Counter(label: Names.forwards, dimensions: [("channel", known), ("result", delivered ? "delivered" : "failed")],
                            factory: factory).increment()
    }

    /// One SQLite statement took `duration` (every statement of the store's connections).
    public func databaseUsed(store: String, duration: Duration) {
        CoreMetrics.Timer(label: Names.databaseDuration, dimensions: [("store", store)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    /// The round trip of the forwarder's outbox query (one small indexed query, every outbox
    /// poll): the database's responsiveness on either store, PostgreSQL's pool included.
    func databaseProbe(store: String, duration: Duration) {
        CoreMetrics.Timer(label: Names.databaseProbe, dimensions: [("store", store)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    /// Everything, in Prometheus' text exposition format (0.0.4).
    public func exposition() -> String { registry.emitToString() }
}

extension Duration {
    /// Whole nanoseconds, saturating (a duration here is never near 292 years).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? (seconds < 0 ? .min : .max) : sum
    }
}
